"""The app's budget belongs to the dataset: shared sessions, restarts, limits."""

from __future__ import annotations

import asyncio
import socket
import threading

import numpy as np
import pandas as pd
import pytest

from dppca import BudgetExceededError
from dppca.app.state import AppState
from dppca.cli import main
from dppca.privacy.ledger import Ledger


@pytest.fixture
def frame(rng) -> pd.DataFrame:
    data = rng.normal(size=(300, 4)) * np.array([3.0, 2.0, 1.0, 0.5])
    return pd.DataFrame(data, columns=["a", "b", "c", "d"]).assign(label="x")


def test_sessions_on_one_dataset_share_its_budget(tmp_path, frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    first, second = AppState(ledger=ledger), AppState(ledger=ledger)
    first.load("toy", frame)
    first.set_budget(1.0, 1e-5)
    first.release("directions", eps=0.4, delta=1e-6)
    second.load("toy (again)", frame.copy())
    assert second.budget.spent == pytest.approx((0.4, 1e-6))
    assert second.locked and second.ledger_frame()["dataset"].tolist() == ["toy"]
    # Other columns of the same table: the same people, the same budget.
    second.select(["a", "b"])
    rel = second.release("directions", eps=0.5, delta=1e-6)
    assert rel.number == 2
    with pytest.raises(BudgetExceededError):
        first.release("scree", eps=0.9, delta=1e-6, reuse_directions=False)
    # A restart: a new Ledger object on the same file, a new session.
    third = AppState(ledger=Ledger(tmp_path / "l.sqlite"))
    third.load("toy", frame)
    assert third.budget.spent == pytest.approx((0.9, 2e-6))  # the basic bound
    assert third.budget.spent_tight[0] < 0.9
    assert third.release_summary()["kind"].tolist() == ["directions", "directions"]


def test_concurrent_releases_in_threads_never_overspend(tmp_path, frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    states = [AppState(ledger=ledger, random_state=np.random.default_rng(i)) for i in range(3)]
    for st in states:
        st.load("toy", frame)
    states[0].set_budget(1.0, 1e-5)
    barrier = threading.Barrier(3)
    outcome: list[str] = []

    def run(st: AppState) -> None:
        barrier.wait()
        try:
            # two compose tightly to eps 0.89 at delta 1e-5, three to 1.11
            st.release("directions", eps=0.7, delta=1e-6)
        except BudgetExceededError:
            outcome.append("refused")
        else:
            outcome.append("made")

    threads = [threading.Thread(target=run, args=(st,)) for st in states]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(outcome) == ["made", "made", "refused"]
    assert states[0].budget.spent[0] == pytest.approx(1.4)
    assert states[0].budget.spent_tight[0] == pytest.approx(0.8868, abs=1e-3)


def test_a_busy_port_gives_one_line(capsys):
    pytest.importorskip("shiny")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        port = sock.getsockname()[1]
        assert main(["app", "--port", str(port), "--no-ledger"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"dppca: error: port {port} on 127.0.0.1 is already in use; stop the other program "
        "or choose another port with --port."
    )


def _post(app, path: str, chunks: list[bytes], headers=()) -> tuple[int, bytes]:
    """Drive one HTTP request through an ASGI app; return status and body."""
    sent: list[dict] = []
    queue = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]

    async def receive():
        return queue.pop(0) if queue else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": path,
        "query_string": b"token=t",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
    }  # the app's token and own address: only the upload limit is tested here
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body


def test_the_upload_limit_counts_the_bytes_received(monkeypatch):
    pytest.importorskip("shiny")
    from shiny import App

    from dppca.app._limits import LocalApp

    received: list[int] = []

    async def fake_shiny(self, scope, receive, send):  # stands in for Shiny's upload handler
        total = 0
        while True:
            message = await receive()
            total += len(message.get("body", b""))
            if not message.get("more_body"):
                break
        received.append(total)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"OK"})

    monkeypatch.setattr(App, "__call__", fake_shiny)
    app = object.__new__(LocalApp)  # no page needed: only __call__ runs
    app.max_upload, app.token, app.hosts = 100, "t", frozenset({"127.0.0.1"})
    # A client that declares nothing (or too little) still stores at most limit + 1 bytes.
    assert _post(app, "/session/s1/upload/j1", [b"x" * 60] * 5)[0] == 200
    assert received == [101]
    # A body announced as far too large is refused outright.
    big = [(b"content-length", b"100000")]
    assert _post(app, "/session/s1/upload/j2", [b"x"], headers=big) == (413, b"upload too large")
    # Other requests are untouched.
    assert _post(app, "/other", [b"y" * 500])[0] == 200 and received[-1] == 500


def test_a_table_with_repeated_column_names_is_refused_with_a_message(frame):
    from dppca.app.data import DataError

    with pytest.raises(DataError, match="repeated column names"):
        AppState().load("dup", frame.set_axis(["a", "b", "a", "d", "label"], axis=1))


def test_a_bundled_dataset_has_the_same_budget_in_the_app_and_the_cli(tmp_path):
    ledger = tmp_path / "l.sqlite"
    argv = ["directions", "--dataset", "wine", "--eps", "0.3", "--delta", "1e-6"]
    assert main([*argv, "--ledger", str(ledger)]) == 0
    state = AppState(ledger=Ledger(ledger))
    state.load_bundled("wine")
    assert state.budget.spent == pytest.approx((0.3, 1e-6))


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_the_app_prints_its_address_and_stops_quietly(tmp_path, signum):
    pytest.importorskip("shiny")
    import os
    import signal
    import subprocess
    import sys
    import time
    import urllib.error
    import urllib.request
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code = "import sys; from dppca.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["app", "--port", str(port), "--ledger", str(tmp_path / "l.sqlite")]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2).close()
            break
        except urllib.error.HTTPError:  # up, and refusing a request without the token
            break
        except OSError:
            time.sleep(0.2)
    proc.send_signal(getattr(signal, signum))
    out, err = proc.communicate(timeout=60)
    assert out.startswith(f"dppca app: serving on http://127.0.0.1:{port}/")
    assert "Traceback" not in err and proc.returncode in (0, -signal.SIGTERM)


def test_unbounded_settings_in_the_app_get_a_message_not_a_crash(frame):
    from dppca.app import figures

    state = AppState(random_state=np.random.default_rng(0))
    state.load("toy", frame)
    preview = state.preview("score", eps=0.3, delta=1e-6, bins=10**6)
    assert preview.cost is None and "at most 1000" in preview.message
    rel = state.release("directions", eps=0.3, delta=1e-6)
    png = figures.render(lambda: figures.loading_figure(rel, uncertainty=10**7), "png")
    assert png.startswith(b"\x89PNG")  # a figure saying why, drawn without the draws
    assert state.budget.spent == pytest.approx((0.3, 1e-6))


def test_the_app_composes_its_releases_tightly(tmp_path, frame):
    # Basic composition would refuse the third release (0.5 + 0.5 + 0.2 > 1);
    # the three Gaussians compose exactly to eps 0.66 at delta 1e-5.
    state = AppState(ledger=Ledger(tmp_path / "l.sqlite"))
    state.load("toy", frame)
    state.set_budget(1.0, 1e-5)
    for eps in (0.5, 0.5, 0.2):
        assert state.preview("directions", eps=eps, delta=1e-6).affordable
        state.release("directions", eps=eps, delta=1e-6)
    assert state.budget.spent_tight[0] == pytest.approx(0.6594, abs=1e-3)
    assert not state.preview("directions", eps=0.9, delta=1e-6).affordable
