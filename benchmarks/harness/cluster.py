"""The processes of benchmarks/scaleout.py: nginx's configuration, the app servers
and job workers, the throw-away PostgreSQL database and the run's Redis keys.

Standard library only at the top, like the rest of the serving harness.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from harness.serving import ANNOTATOR, free_port, stop, wait_until_up

__all__ = [
    "APT_ENV",
    "NGINX_INSTALL",
    "NGINX_UPSTREAM",
    "Cluster",
    "create_database",
    "drop_redis_keys",
]

NGINX_INSTALL = "apt-get install -y nginx-light"
APT_ENV = {"DEBIAN_FRONTEND": "noninteractive"}

NGINX_UPSTREAM = """\
upstream annotator {{
    # Round robin (nginx's default). A server that refuses or breaks
    # connections max_fails times within fail_timeout is left alone for
    # fail_timeout; a request not yet sent to it goes to the other one
    # (proxy_next_upstream error timeout). A POST already sent is never sent
    # twice: nginx answers 502 and the browser decides (the app stores the
    # same score once however often it comes).
    server 127.0.0.1:{port_a} max_fails=3 fail_timeout=5s;
    server 127.0.0.1:{port_b} max_fails=3 fail_timeout=5s;
    # No kept-alive connections to the servers (no "keepalive" here):
    # gunicorn closes an idle one after 2 s, and a POST nginx sends on it at
    # that moment is reset and answered 502 (seen in benchmarks/scaleout.py
    # on a busy machine, even with nginx's keepalive_timeout at 1 s).
}}
"""

NGINX_CONFIG = """\
user {user};
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
events {{
    worker_connections 1024;
}}
http {{
    access_log {folder}/nginx-access.log;
    client_body_temp_path {folder}/client_body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
{upstream}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 256k;
        location / {{
            proxy_pass http://annotator;
            proxy_redirect off;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $remote_addr;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host $http_host;
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
            proxy_read_timeout 120s;
        }}
    }}
}}
"""


def nginx_config(folder: Path, port: int, port_a: int, port_b: int) -> str:
    upstream = NGINX_UPSTREAM.format(port_a=port_a, port_b=port_b)
    indented = "".join(f"    {line}\n" if line else "\n" for line in upstream.splitlines())
    user = pwd.getpwuid(os.geteuid()).pw_name
    return NGINX_CONFIG.format(folder=folder, port=port, upstream=indented, user=user)


# ------------------------------------------------------------------ processes


@dataclass
class Cluster:
    """The processes of one run and the settings they share."""

    folder: Path
    env: dict[str, str]
    nginx_port: int = field(default_factory=free_port)
    servers: dict[str, subprocess.Popen] = field(default_factory=dict)
    server_ports: dict[str, int] = field(default_factory=dict)
    workers: dict[str, subprocess.Popen] = field(default_factory=dict)
    nginx: subprocess.Popen | None = None

    def instance_env(self, name: str) -> dict[str, str]:
        return {**self.env, "ANNOTATOR_INSTANCE_PATH": str(self.folder / f"instance-{name}")}

    def _spawn(self, args: list[str], name: str, log: str) -> subprocess.Popen:
        (self.folder / f"instance-{name}").mkdir(exist_ok=True)
        return subprocess.Popen(
            [str(ANNOTATOR), *args],
            env=self.instance_env(name),
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / log, "a"),  # noqa: SIM115
            start_new_session=True,
        )

    def serve(self, name: str, workers: int, threads: int) -> None:
        port = free_port()
        process = self._spawn(
            ["serve", "--no-demo", "--no-jobs-worker", "--port", str(port)]
            + ["--workers", str(workers), "--threads", str(threads)],
            name,
            f"server-{name}.log",
        )
        wait_until_up(port, "/login", process)
        log = self.folder / f"server-{name}.log"
        deadline = time.monotonic() + 90
        while log.read_text().count("Worker ready") < workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"server {name}: workers not ready within 90 s")
            time.sleep(0.2)
        self.servers[name], self.server_ports[name] = process, port

    def start_worker(self, name: str) -> None:
        self.workers[name] = self._spawn(["worker", "--workers", "1"], name, f"worker-{name}.log")

    def start_nginx(self) -> None:
        ports = list(self.server_ports.values())
        config = self.folder / "nginx.conf"
        config.write_text(nginx_config(self.folder, self.nginx_port, *ports))
        self.nginx = subprocess.Popen(
            [shutil.which("nginx"), "-p", str(self.folder), "-c", str(config)]
            + ["-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / "nginx-stderr.log", "a"),  # noqa: SIM115
            start_new_session=True,
        )
        wait_until_up(self.nginx_port, "/login", self.nginx)

    def stop(self) -> None:
        for process in [*self.servers.values(), *self.workers.values()]:
            stop(process)
        if self.nginx is not None:
            stop(self.nginx, signal.SIGQUIT)


def create_database(postgres_url: str):
    from sqlalchemy import create_engine, text

    from annotator.db import normalise_url

    name = "annotator_scaleout_" + uuid.uuid4().hex[:10]
    admin = create_engine(normalise_url(postgres_url), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()

    url = admin.url.set(database=name).render_as_string(hide_password=False)
    return url, drop


def drop_redis_keys(redis_url: str, queue: str) -> int:
    import redis

    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(match=f"*{queue}*"))
    if keys:
        client.delete(*keys)
    client.close()
    return len(keys)
