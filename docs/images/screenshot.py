"""Take the README's picture: the demo study's dashboard at 1280 px, in headless Chromium.

    .venv/bin/python docs/images/screenshot.py [--out docs/images/dashboard.png]

Serves a fresh instance with the demo study (`annotator serve --dev --port N`, as
`make serve` loads it, in a temporary folder), logs in as the demo's lead, waits
for the dashboard's numbers and saves the page at 1280 px from its top to the end of
the first scale's section (the 0-5 scale: progress, reliability, agreement and the
alt-test's verdict per judge). Needs
Debian's Chromium (`apt-get install -y chromium`) and the test extras (Playwright).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=5)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "dashboard.png")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        instance = Path(folder) / "instance"
        env = dict(os.environ, ANNOTATOR_INSTANCE_PATH=str(instance))
        env.pop("ANNOTATOR_DATABASE_URL", None)
        port = free_port()
        annotator = Path(sys.executable).parent / "annotator"
        server = subprocess.Popen(
            [str(annotator), "serve", "--dev", "--port", str(port)], env=env, cwd=folder
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_for(f"{base}/login")
            password = (instance / "demo-lead-password.txt").read_text().split()[-1]
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, args=["--headless", "--no-sandbox"]
                )
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{base}/login")
                page.get_by_label("Email or rater code").fill("lead@example.org")
                page.get_by_label("Password").fill(password)
                page.get_by_role("button", name="Log in").click()
                page.goto(f"{base}/lead/studies/demo")
                dashboard = page.locator("#dashboard")
                heading = dashboard.get_by_role("heading", name="Scale 0-5")
                heading.wait_for(timeout=120_000)
                first_scale = heading.locator("xpath=..").bounding_box()
                bottom = first_scale["y"] + first_scale["height"] + 16
                args.out.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(
                    path=str(args.out),
                    full_page=True,
                    clip={"x": 0, "y": 0, "width": 1280, "height": bottom},
                )
                browser.close()
            # 64 colours look the same for this page of text and flat fills, and keep
            # the repository's copy at about a third of the size (90 kB, not 270 kB).
            from PIL import Image

            Image.open(args.out).convert("RGB").quantize(colors=64).save(args.out, optimize=True)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
