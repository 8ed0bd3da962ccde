"""`fatpipe depot ...` hands its arguments to the fatpipe-depot binary; the loopback example and the
configuration examples of docs/depot.md run as written (ports and paths made local)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT

DOC = ROOT / "docs" / "depot.md"


def _binary() -> str:
    from fatpipe.binaries import binary
    from fatpipe.exceptions import FatpipeError

    try:
        return binary("fatpipe-depot")
    except FatpipeError as e:
        pytest.skip(str(e))


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _fatpipe(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fatpipe.cli", *args], capture_output=True, text=True, **kw)


def test_cli_hands_arguments_to_the_binary(tmp_path):
    _binary()
    key = tmp_path / "k"
    r = _fatpipe("depot", "keygen", str(key))
    assert r.returncode == 0, r.stderr
    assert len(key.read_text().strip()) == 64
    assert key.stat().st_mode & 0o077 == 0
    r = _fatpipe("depot", "sign", "--key-file", str(key), "--hops", "127.0.0.1:9001,127.0.0.1:8080", "--target", "/a.bin")
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"http://127\.0\.0\.1:9001/\.fp1/0/\d+/127\.0\.0\.1:9001,127\.0\.0\.1:8080/[A-Za-z0-9_-]{43}/a\.bin\n", r.stdout)
    r = _fatpipe("depot", "serve", "--help")
    assert r.returncode == 0 and "--allow" in r.stdout and "--splice" in r.stdout
    # The daemon's own errors and exit status come through.
    r = _fatpipe("depot", "serve", "--listen", "127.0.0.1:0", "--key-file", str(key))
    assert r.returncode == 2 and "depot.allow" in r.stderr


def test_docs_loopback_example_runs(tmp_path):
    exe = _binary()
    block = _blocks("sh")[0]
    ports = _free_ports(3)
    for old, new in zip(("9001", "9002", "8080"), ports):
        block = block.replace(f"127.0.0.1:{old}", f"127.0.0.1:{new}")
    env = dict(os.environ, PATH=f"{Path(exe).parent}:{os.environ['PATH']}", TMPDIR=str(tmp_path))
    r = subprocess.run(["bash", "-e", "-c", block], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "identical" in r.stdout


def _start(exe: str, args: list[str]) -> tuple[subprocess.Popen, str]:
    p = subprocess.Popen([exe, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    if not line.startswith("listening"):
        p.kill()
        raise AssertionError(f"{args[0]} did not start: {line} {p.stderr.read()}")
    return p, line.split()[2]


def test_docs_config_examples_start(tmp_path):
    exe = _binary()
    depot_toml, origin_toml = [b for b in _blocks("toml") if "[depot]" in b or "[origin]" in b][:2]
    key = tmp_path / "key"
    subprocess.run([exe, "keygen", str(key)], check=True)
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "f.txt").write_text("hello\n")
    (tmp_path / "depot.toml").write_text(depot_toml)
    (tmp_path / "origin.toml").write_text(origin_toml)
    local = ["--set", "metrics.listen=\"127.0.0.1:0\"", "--set", "log.format=\"json\""]
    d, daddr = _start(exe, ["serve", "--config", str(tmp_path / "depot.toml"), "--listen", "127.0.0.1:0",
                            "--key-file", str(key), "--allow", "127.0.0.1", *local])
    try:
        o, oaddr = _start(exe, ["origin", "--config", str(tmp_path / "origin.toml"), "--listen", "127.0.0.1:0",
                                "--root", str(tmp_path / "files"), "--key-file", str(key),
                                "--advertise", "127.0.0.1:1", "--set", f"origin.chain=[{{prefix=\"/\", depots=[\"{daddr}\"]}}]"])
        try:
            # The origin redirects into the configured chain.
            r = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", f"http://{oaddr}/f.txt"],
                               capture_output=True, text=True)
            code, url = r.stdout.split(" ", 1)
            assert code == "302" and url.startswith(f"http://{daddr}/.fp1/0/")
        finally:
            o.terminate()
            assert o.wait(timeout=10) == 0
    finally:
        d.terminate()
        assert d.wait(timeout=10) == 0
    # A typo in a key is an error naming it.
    bad = tmp_path / "bad.toml"
    bad.write_text(depot_toml.replace("max_transfers", "max_transfer"))
    r = subprocess.run([exe, "serve", "--config", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2 and "max_transfer" in r.stderr
