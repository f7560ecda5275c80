"""The judge endpoints an instance offers its leads' web pages: ``JUDGE_ENDPOINTS``.

A lead starts a judge run from the study page by choosing one of these names,
never by typing an address: a server that fetched any URL a page posted could
be pointed at addresses only it can reach (its database, a cloud's metadata
service). The instance's operator lists the endpoints in ``instance/config.py``
(or as JSON in ``ANNOTATOR_JUDGE_ENDPOINTS``)::

    JUDGE_ENDPOINTS = {
        "local-vllm": {"base_url": "http://127.0.0.1:8000/v1"},
        "openai": {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY"},
    }

``api_key_env`` names the environment variable holding the key: the key is
read from the server's environment when a run starts, never shown, logged or
stored. The command line (``annotator judge --base-url``) is the operator's
shell and keeps taking any address.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..words import noun

__all__ = ["JudgeEndpoint", "endpoint_api_key", "judge_endpoints"]

SETTING = "JUDGE_ENDPOINTS"
_KEYS = {"base_url", "api_key_env"}
# The names a shell allows for a variable (POSIX): letters, digits, underscores.
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A name shown in a select and kept in a job's parameters.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._ -]{0,63}")


@dataclass(frozen=True)
class JudgeEndpoint:
    """One endpoint a lead may choose: its name, address and key's variable."""

    name: str
    base_url: str
    # None: the endpoint takes no key (vLLM, llama.cpp, Ollama on this machine).
    api_key_env: str | None = None


def judge_endpoints(config: Mapping) -> dict[str, JudgeEndpoint]:
    """The endpoints of ``config[JUDGE_ENDPOINTS]`` by name, in the order given.

    ``ValueError`` naming the setting, the endpoint and the key for anything
    malformed; the app checks this when it starts, so a bad setting stops the
    server with a message rather than a page with a 500.
    """
    listed = config.get(SETTING) or {}
    if not isinstance(listed, Mapping):
        raise ValueError(
            f"{SETTING}: expected a mapping of names to "
            f'{{"base_url": ..., "api_key_env": ...}}, got {type(listed).__name__}'
        )
    out = {}
    for name, spec in listed.items():
        where = f"{SETTING}[{name!r}]"
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(
                f"{where}: a name is 1-64 letters, digits, spaces, '.', '_' or '-', "
                "starting with a letter or digit"
            )
        if not isinstance(spec, Mapping):
            raise ValueError(f'{where}: expected {{"base_url": ..., "api_key_env": ...}}')
        unknown = sorted(set(spec) - _KEYS)
        if unknown:
            raise ValueError(
                f"{where}: unknown {noun(len(unknown), 'key')} {', '.join(unknown)} "
                "(known: base_url, api_key_env)"
            )
        base_url = spec.get("base_url")
        parts = urlsplit(base_url) if isinstance(base_url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"{where}.base_url: expected an http(s) address such as "
                f"http://127.0.0.1:8000/v1, got {base_url!r}"
            )
        variable = spec.get("api_key_env")
        if variable is not None and not (
            isinstance(variable, str) and _VARIABLE.fullmatch(variable)
        ):
            raise ValueError(
                f"{where}.api_key_env: the NAME of an environment variable "
                f"(e.g. OPENAI_API_KEY), got {variable!r}"
            )
        out[name] = JudgeEndpoint(name=name, base_url=base_url, api_key_env=variable)
    return out


def endpoint_api_key(endpoint: JudgeEndpoint) -> str | None:
    """The endpoint's key from the environment of the process that runs the judge.

    ``ValueError`` naming the variable (never a value) when the endpoint has
    one and it is unset or empty.
    """
    if endpoint.api_key_env is None:
        return None
    key = os.environ.get(endpoint.api_key_env)
    if not key:
        raise ValueError(
            f"the endpoint {endpoint.name!r} takes its API key from the environment "
            f"variable {endpoint.api_key_env}, which is not set where the judge runs"
        )
    return key
