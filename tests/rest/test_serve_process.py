"""``pushdown serve`` as a process: the metalake admin calls of the official client, TLS,
clear startup errors (no traceback), and no credential or token ever in its log."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import os
import signal
import socket
import ssl
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from gravitino.exceptions import base as gx

from pushdown.app.service import AccessControl
from tests.processes import alive

from .conftest import PUSHDOWN, ROOT, admin_client, client, init_store, serving, wait_for
from .tokens import AUDIENCE, public_key_file, token

ADMIN_CONFIG = 'store = "pd.db"\n[access]\nservice_admins = ["admin"]\n'


def test_metalake_admin_calls_of_the_official_client(tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text(ADMIN_CONFIG)
    init_store(config)
    with serving(config, tmp_path / "serve.log") as server:
        uri = server.ready()
        with pytest.raises(gx.ForbiddenException, match="service admin"):
            admin_client(uri, "mallory").create_metalake("test", "no", {})
        admin = admin_client(uri, "admin")
        made = admin.create_metalake("test", "the one", {"team": "data"})
        assert (made.name(), made.comment()) == ("test", "the one")
        assert made.properties() == {"team": "data"}
        assert admin.load_metalake("test").properties() == {"team": "data", "in-use": "true"}
        assert made.audit_info().creator() == "admin"
        with pytest.raises(gx.MetalakeAlreadyExistsException):
            admin.create_metalake("test", "again", {})
        assert [m.name() for m in admin.list_metalakes()] == ["test"]
        assert admin.load_metalake("test").comment() == "the one"
        with pytest.raises(gx.NoSuchMetalakeException):
            admin.load_metalake("other")
        assert admin_client(uri, "mallory").list_metalakes() == []
        client(uri, "admin").add_user("ann")
        with pytest.raises(gx.MetalakeInUseException, match="in use"):
            admin.drop_metalake("test")
        with pytest.raises(gx.ForbiddenException):
            admin_client(uri, "ann").drop_metalake("test", force=True)
        assert admin.drop_metalake("test", force=True) is True
        assert admin.list_metalakes() == []
        assert admin.drop_metalake("test", force=True) is False
        admin.close()
        assert server.stop() == 0


def test_credentials_and_tokens_never_reach_the_log(tmp_path: Path) -> None:
    key = public_key_file(tmp_path)
    config = tmp_path / "pushdown.toml"
    config.write_text(
        ADMIN_CONFIG
        + f'[serve]\nauthenticators = ["simple", "oauth"]\njwt_key = {{ file = "{key.name}" }}\n'
        + f'jwt_audience = "{AUDIENCE}"\n'
    )
    init_store(config)
    log = tmp_path / "serve.log"
    password = "s3cret-Pa55word"
    basic = base64.b64encode(f"admin:{password}".encode()).decode()
    tokens = [
        token("admin"),
        token("admin", ttl=-60),
        token("admin", key="attacker"),
        token("x", audience="no"),
    ]
    with serving(config, log) as server:
        uri = server.ready()
        with httpx.Client(base_url=uri) as h:
            assert h.post(
                "/api/metalakes", json={"name": "test"}, headers={"Authorization": f"Basic {basic}"}
            )
            answers = [
                h.get("/api/metalakes/test/users", headers={"Authorization": f"Bearer {t}"}) for t in tokens
            ]
            answers.append(h.get("/api/metalakes/test/users", headers={"Authorization": f"Basic {basic}x"}))
            answers.append(h.get("/api/metalakes/test/nowhere", headers={"Authorization": f"Basic {basic}"}))
        assert [a.status_code for a in answers] == [200, 401, 401, 401, 401, 405]
        assert server.stop() == 0
    text = log.read_text()
    assert "GET /api/metalakes/{metalake}/users -> 401" in text  # the requests were logged...
    secrets = (basic, password, *tokens, *(t.split(".")[2] for t in tokens))
    for secret in secrets:
        assert secret not in text  # ...without their credentials
        assert all(secret not in a.text for a in answers)  # nor do the answers repeat them
    assert "Authorization" not in text and "Bearer ey" not in text


def _run_serve(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [*PUSHDOWN, "--config", str(config), "serve", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=config.parent,
        timeout=120,
    )


def test_a_port_in_use_is_one_clear_line(tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text(ADMIN_CONFIG)
    init_store(config)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        done = _run_serve(config, "--port", str(taken.getsockname()[1]))
    assert done.returncode == 1
    assert "cannot listen on 127.0.0.1" in done.stderr and "in use" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_tls_files_are_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "cert.pem").write_text("not a certificate\n")
    (tmp_path / "key.pem").write_text("not a key\n")
    config = tmp_path / "pushdown.toml"
    config.write_text(ADMIN_CONFIG + '[serve]\ntls_cert = "cert.pem"\ntls_key = "key.pem"\n')
    init_store(config)
    done = _run_serve(config, "--port", "0")
    assert done.returncode == 1
    assert "cannot use tls_cert" in done.stderr and "Traceback" not in done.stderr
    config.write_text(ADMIN_CONFIG + '[serve]\ntls_cert = "missing.pem"\ntls_key = "key.pem"\n')
    done = _run_serve(config, "--port", "0")
    assert done.returncode == 1 and "does not exist" in done.stderr and "Traceback" not in done.stderr


def _self_signed(tmp: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_path, key_path


def test_tls_when_a_certificate_and_key_are_configured(tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    config = tmp_path / "pushdown.toml"
    config.write_text(ADMIN_CONFIG + f'[serve]\ntls_cert = "{cert.name}"\ntls_key = "{key.name}"\n')
    init_store(config)
    with serving(config, tmp_path / "serve.log") as server:
        port = server.port()
        assert any(line.get("scheme") == "https" for line in server.lines())
        with httpx.Client(verify=ssl.create_default_context(cafile=str(cert))) as h:
            r = h.get(f"https://127.0.0.1:{port}/api/version")
        assert r.json()["version"]["version"] == "1.3.0"
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/api/version", timeout=5)


WORKERS_CONFIG = (
    ADMIN_CONFIG
    + '[backends.demo]\nkind = "recording"\nstate = "demo.json"\n'
    + '[daemon]\ninterval = "5m"\npoll = "5m"\nbackoff_min = "100ms"\nbackoff_max = "500ms"\nnice = 3\n'
)


def _workers(log: Path) -> list[tuple[int, int]]:
    """(the serving process, the workers' process) of each start the log reports."""
    out = []
    for raw in log.read_text(errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict) and "workers_pid" in line and "exit" not in line:
            out.append((int(line["pid"]), int(line["workers_pid"])))
    return out


def _pushed(config: Path) -> Callable[[], bool]:
    """Whether the workers carried every change of the store to the backend ``demo``."""

    def check() -> bool:
        ac = AccessControl.open(str(config), push=False, create_store=False)
        try:
            return ac.store.cursor("demo") == ac.store.last_seq()
        finally:
            ac.close()

    return check


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_the_workers_run_in_a_child_process_restarted_when_it_dies_and_reaped(tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text(WORKERS_CONFIG)
    init_store(config)
    log = tmp_path / "serve.log"
    with serving(config, log) as server, httpx.Client(headers={"Authorization": _basic("admin")}) as h:
        uri = server.ready()
        wait_for(lambda: len(_workers(log)) == 1, 30, "the workers started")
        [(serve_pid, first)] = _workers(log)
        assert serve_pid == server.proc.pid and first != serve_pid and _parent(first) == serve_pid
        # [daemon] nice = 3: the workers run that much lower in CPU priority than the server
        wait_for(lambda: _nice(first) == _nice(serve_pid) + 3, 30, "the workers' priority lowered")
        assert h.post(f"{uri}/api/metalakes", json={"name": "test"}).status_code == 200
        assert h.post(f"{uri}/api/metalakes/test/users", json={"name": "ann"}).status_code == 200
        wait_for(_pushed(config), 30, "the change pushed by the workers' process")
        holders = [line for line in _json(log) if "holding the daemon lease" in str(line.get("msg"))]
        assert [line["pid"] for line in holders] == [first]  # the lease is the child's

        os.kill(first, signal.SIGKILL)
        wait_for(lambda: len(_workers(log)) == 2, 30, "the workers started again")
        second = _workers(log)[1][1]
        assert second != first and _parent(second) == serve_pid
        assert any("SIGKILL" in str(line.get("msg")) for line in server.lines())
        assert h.post(f"{uri}/api/metalakes/test/users", json={"name": "bob"}).status_code == 200
        wait_for(_pushed(config), 30, "a change pushed by the new workers' process")
        assert server.stop() == 0
    assert not alive(second)  # stopped and reaped with the server


def test_the_workers_stop_when_the_server_is_killed(tmp_path: Path) -> None:
    config = tmp_path / "pushdown.toml"
    config.write_text(WORKERS_CONFIG)
    init_store(config)
    log = tmp_path / "serve.log"
    with serving(config, log) as server:
        server.ready()
        wait_for(lambda: len(_workers(log)) == 1, 30, "the workers started")
        workers = _workers(log)[0][1]
        server.proc.kill()
        server.proc.wait(10)
        wait_for(lambda: not alive(workers), 30, "the orphaned workers stop")
    gone = [line for line in _json(log) if line.get("pid") == workers and "is gone" in str(line.get("msg"))]
    assert gone, "the workers said why they stopped"


def _json(log: Path) -> list[dict[str, Any]]:
    out = []
    for raw in log.read_text(errors="replace").splitlines():
        try:
            line = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict):
            out.append(line)
    return out


def _basic(user: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:x".encode()).decode()
