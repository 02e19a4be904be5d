"""One load per release name at a time, with real processes against the real server.

Before, ``graphlink load relA.csv --name R4`` and ``graphlink load relQ.csv --name R4`` run at once could both exit
0, leave the union of both releases marked loaded with relQ's fingerprint, and a later load of relQ said "already
loaded". Now a load first creates a ``LoadLock`` node under a uniqueness constraint (``Store.load_lock``): the
second load is refused in one line (exit 2), whatever the timing; the database then holds exactly one of the two
releases. A lock whose process died (kill -9) is taken over by the next load on the same machine; one from
another machine needs ``--break-lock``.

Later report: ``--break-lock`` removed the lock of a loader that was still running, which then reported success
while the release was left half-written with the other load's fingerprint. Now the holder refreshes a heartbeat on
its lock node; ``--break-lock`` refuses (one line, exit 2) while the holder is alive -- on this machine its process
(PID and start time), on another its heartbeat -- and a load whose lock was broken or taken marks nothing loaded
and fails with one line instead of reporting success.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest

from graphlink.errors import StoreError
from graphlink.simulation.simulate import simulate_uniform
from graphlink.store import neo4j as store_module
from graphlink.store import server
from graphlink.store.neo4j import fingerprint

pytestmark = pytest.mark.neo4j

HOLDER = textwrap.dedent("""
    import sys
    from graphlink.store import neo4j
    if len(sys.argv) > 2:
        neo4j.HEARTBEAT = float(sys.argv[2])
    with neo4j.connect() as store, store.load_lock(sys.argv[1]):
        print("HELD", flush=True)
        sys.stdin.read()          # until the test closes our stdin (or kills us)
""")


@pytest.fixture
def env(neo4j_server) -> dict[str, str]:
    """The environment a CLI process needs to use the test server (URI, credentials, pinned certificate)."""
    uri, auth, _ = neo4j_server
    out = dict(os.environ, NEO4J_URI=uri, NEO4J_AUTH="none" if auth is None else f"{auth[0]}/{auth[1]}")
    cert = server.pinned_certificate(uri)
    if cert is not None:
        out["GRAPHLINK_NEO4J_CERT"] = str(cert)
    return out


@pytest.fixture
def name(neo4j_store):
    value = f"test-lock-{uuid.uuid4().hex[:8]}"
    yield value
    _remove_lock(neo4j_store, value)
    neo4j_store.drop_release(value)


def _remove_lock(store, name: str) -> None:
    """Clean-up after a test: the lock node goes whoever holds it (break_lock would refuse a live holder)."""
    store._query("MATCH (l:LoadLock) WHERE l.release STARTS WITH $n DELETE l", {"n": name})


@pytest.fixture(scope="module")
def releases(tmp_path_factory) -> dict[str, tuple[Path, pd.DataFrame]]:
    """Two different releases (relA, relQ) as CSV files and as the rows the graph must hold."""
    folder = tmp_path_factory.mktemp("lock")
    out = {}
    for label, seed in (("relA", 4), ("relQ", 5)):
        rel = simulate_uniform(300, 6, 0.5, withhold=0.1, seed=seed)
        path = folder / f"{label}.csv"
        rel.frame.to_csv(path, index=False)
        out[label] = (path, rel.frame[["location", "kind", "element"]].astype(str).drop_duplicates())
    return out


def _load(env: dict, csv: Path, name: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "graphlink.cli", "load", str(csv), "--name", name, *extra],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _hold(env: dict, name: str, *beat: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, name, *beat], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "HELD", proc.stderr.read()
    return proc


def _rows(store, name: str) -> set[tuple[str, str, str]]:
    back = store.read_release(name)
    return set(map(tuple, back[["location", "kind", "element"]].to_numpy()))


def test_a_second_load_under_a_held_name_is_refused_in_one_line(env, name, releases, neo4j_store) -> None:
    holder = _hold(env, name)
    try:
        second = _load(env, releases["relQ"][0], name)
        out, err = second.communicate(timeout=300)
        assert second.returncode == 2, (out, err)
        assert len(err.strip().splitlines()) == 1 and "is being loaded by another process" in err, err
        assert f"process {holder.pid}" in err and "Traceback" not in err
        assert neo4j_store.release_info(name) is None                      # nothing of relQ was written
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    again = _load(env, releases["relQ"][0], name)                          # the lock is gone with its load
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert _rows(neo4j_store, name) == set(map(tuple, releases["relQ"][1].to_numpy()))


@pytest.mark.slow
def test_two_loads_at_once_never_merge(env, name, releases, neo4j_store) -> None:
    """The reported race, three times: whichever load wins, the other exits 2, and the graph holds exactly the
    winner's release with the winner's fingerprint; loading the loser again is refused, never 'already loaded'."""
    for trial in range(3):
        trial_name = f"{name}-{trial}"
        a, q = _load(env, releases["relA"][0], trial_name), _load(env, releases["relQ"][0], trial_name)
        results = {label: (p.wait(timeout=600), p.stdout.read(), p.stderr.read())
                   for label, p in (("relA", a), ("relQ", q))}
        try:
            codes = sorted(code for code, _, _ in results.values())
            assert codes == [0, 2], results
            winner = next(label for label, (code, _, _) in results.items() if code == 0)
            loser = "relQ" if winner == "relA" else "relA"
            err = results[loser][2]
            assert len(err.strip().splitlines()) == 1 and ("being loaded" in err or "different content" in err), err
            expected = releases[winner][1]
            assert _rows(neo4j_store, trial_name) == set(map(tuple, expected.to_numpy()))
            info = neo4j_store.release_info(trial_name)
            assert info.status == "loaded" and info.fingerprint == fingerprint(expected)
            again = _load(env, releases[loser][0], trial_name)
            out, err = again.communicate(timeout=300)
            assert again.returncode == 2 and "different content" in err and "already loaded" not in out
        finally:
            _remove_lock(neo4j_store, trial_name)
            neo4j_store.drop_release(trial_name)


def test_the_lock_of_a_killed_loader_is_taken_over(env, name, releases, neo4j_store) -> None:
    holder = _hold(env, name)
    holder.send_signal(signal.SIGKILL)                                       # kill -9: no cleanup at all
    holder.wait(timeout=60)
    assert neo4j_store._query("MATCH (l:LoadLock {release: $n}) RETURN l.pid AS pid", {"n": name})[0]["pid"] \
        == holder.pid                                                      # the lock outlived its process
    load = _load(env, releases["relA"][0], name)
    out, err = load.communicate(timeout=300)
    assert load.returncode == 0, err
    assert _rows(neo4j_store, name) == set(map(tuple, releases["relA"][1].to_numpy()))
    assert not neo4j_store._query("MATCH (l:LoadLock {release: $n}) RETURN l", {"n": name})


def _foreign_lock(store, name: str, heartbeat_age: str) -> None:
    """A lock as a load on another machine leaves it, its last heartbeat ``heartbeat_age`` ago (ISO duration)."""
    store.apply_schema()
    store._query("CREATE (:LoadLock {release: $n, token: 'elsewhere', host: 'another-machine', boot: 'b', pid: 1, "
                 "started: '1', at: datetime() - duration('PT2H'), heartbeat: datetime() - duration($age), "
                 "interval: 10.0})", {"n": name, "age": heartbeat_age})


def test_a_lock_from_another_machine_needs_break_lock(env, name, releases, neo4j_store) -> None:
    _foreign_lock(neo4j_store, name, "PT10M")                 # that load died an hour and fifty minutes in
    load = _load(env, releases["relA"][0], name)
    out, err = load.communicate(timeout=300)
    assert load.returncode == 2 and "another-machine" in err and "cannot check" in err, err
    assert len(err.strip().splitlines()) == 1
    load = _load(env, releases["relA"][0], name, "--break-lock")
    out, err = load.communicate(timeout=300)
    assert load.returncode == 0, err
    assert "removed the load lock of process 1 on another-machine" in out
    assert _rows(neo4j_store, name) == set(map(tuple, releases["relA"][1].to_numpy()))


def test_the_lock_is_reentrant_in_one_thread_only(neo4j_store, name) -> None:
    import threading

    from graphlink.errors import StoreError

    with neo4j_store.load_lock(name) as token, neo4j_store.load_lock(name) as inner:
        assert inner == token                                   # the Spark loader, then its connector writer
        refused: list[str] = []

        def other() -> None:                                    # the app: another session in the same process
            try:
                with neo4j_store.load_lock(name):
                    pass
            except StoreError as exc:
                refused.append(str(exc))

        t = threading.Thread(target=other)
        t.start()
        t.join(60)
        assert refused and "being loaded" in refused[0]
    assert not neo4j_store._query("MATCH (l:LoadLock {release: $n}) RETURN l", {"n": name})


def test_who_is_known_to_be_gone() -> None:
    """Staleness from the lock's owner fields alone (no server): this machine can tell, another cannot."""
    me = store_module._lock_owner()
    alive = dict(me)
    assert not store_module._lock_owner_gone(alive, me)
    assert not store_module._lock_owner_gone({**me, "host": "elsewhere"}, me)
    assert store_module._lock_owner_gone({**me, "boot": "an-earlier-boot"}, me) == bool(me["boot"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    time.sleep(0.1)
    assert store_module._lock_owner_gone({**me, "pid": dead.pid}, me)
    if me["started"]:                                           # /proc: a reused PID has another start time
        assert store_module._lock_owner_gone({**me, "started": str(int(me["started"]) - 1)}, me)


def _lock_token(store, name: str) -> str | None:
    recs = store._query("MATCH (l:LoadLock {release: $n}) RETURN l.token AS t", {"n": name})
    return recs[0]["t"] if recs else None


def test_break_lock_refuses_a_live_holder_on_this_machine(env, name, releases, neo4j_store) -> None:
    """As reported: --break-lock while the other load runs. Refused in one line naming it, exit 2, the lock
    untouched, nothing loaded; once that process is dead the same command breaks the lock and loads."""
    holder = _hold(env, name)
    try:
        token = _lock_token(neo4j_store, name)
        load = _load(env, releases["relQ"][0], name, "--break-lock")
        out, err = load.communicate(timeout=300)
        assert load.returncode == 2, (out, err)
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        assert f"process {holder.pid}" in err and "still running" in err and "since 20" in err, err
        assert _lock_token(neo4j_store, name) == token                  # the holder keeps its lock
        assert neo4j_store.release_info(name) is None
    finally:
        holder.send_signal(signal.SIGKILL)                               # dies holding it
        holder.wait(timeout=60)
    load = _load(env, releases["relQ"][0], name, "--break-lock")
    out, err = load.communicate(timeout=300)
    assert load.returncode == 0, err
    assert f"removed the load lock of process {holder.pid}" in out
    assert _rows(neo4j_store, name) == set(map(tuple, releases["relQ"][1].to_numpy()))


def test_break_lock_refuses_another_machine_while_its_heartbeat_is_fresh(env, name, releases, neo4j_store) -> None:
    _foreign_lock(neo4j_store, name, "PT5S")                 # another machine's load, alive five seconds ago
    load = _load(env, releases["relA"][0], name, "--break-lock")
    out, err = load.communicate(timeout=300)
    assert load.returncode == 2 and len(err.strip().splitlines()) == 1, (out, err)
    assert "process 1 on another-machine" in err and "heartbeat" in err and "since 20" in err, err
    assert _lock_token(neo4j_store, name) == "elsewhere" and neo4j_store.release_info(name) is None
    with pytest.raises(StoreError, match="was not removed"):
        neo4j_store.break_lock(name)                         # the library refuses as the CLI does
    neo4j_store._query("MATCH (l:LoadLock {release: $n}) SET l.heartbeat = datetime() - duration('PT61S')",
                       {"n": name})                          # six intervals without a heartbeat: dead
    assert neo4j_store.break_lock(name).token == "elsewhere"
    assert _lock_token(neo4j_store, name) is None


def test_the_holder_refreshes_its_heartbeat(env, name, neo4j_store) -> None:
    holder = _hold(env, name, "0.2")
    try:
        def beat() -> object:
            return neo4j_store._query("MATCH (l:LoadLock {release: $n}) RETURN l.heartbeat AS h, l.interval AS i",
                                      {"n": name})[0]
        first = beat()
        assert first["i"] == 0.2
        deadline = time.monotonic() + 60
        while beat()["h"] == first["h"]:
            assert time.monotonic() < deadline, "the heartbeat never moved"
            time.sleep(0.2)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0, holder.stderr.read()
    assert _lock_token(neo4j_store, name) is None


@pytest.mark.parametrize("how", ["broken", "taken"])
def test_a_load_whose_lock_was_broken_does_not_report_success(neo4j_store, name, releases, how) -> None:
    """Between two batches of a load, its lock node is deleted (broken) or replaced by another load's (taken):
    the load marks nothing loaded and raises one line instead of returning a summary."""
    frame = releases["relA"][1]
    seen: list[str] = []

    def interfere(fraction: float, message: str) -> None:
        if seen:
            return
        seen.append(message)
        neo4j_store._query("MATCH (l:LoadLock {release: $n}) DELETE l", {"n": name})
        if how == "taken":
            neo4j_store._query("CREATE (:LoadLock {release: $n, token: 'thief', host: 'another-machine', pid: 2, "
                               "at: datetime(), heartbeat: datetime(), interval: 10.0})", {"n": name})

    with pytest.raises(store_module.LockLostError) as err:
        neo4j_store.load_release(frame, name=name, progress=interfere, batch_size=200, bulk="never")
    assert seen, "the load never reached a second batch"
    text = str(err.value)
    assert "\n" not in text and "another process broke the load lock" in text and "load it again" in text
    info = neo4j_store.release_info(name)
    assert info is not None and info.status != "loaded"               # never marked complete
    assert _lock_token(neo4j_store, name) == ("thief" if how == "taken" else None)   # the other's lock stays


def test_a_load_whose_lock_was_broken_exits_non_zero_in_one_line(env, name, releases, neo4j_store,
                                                              tmp_path) -> None:
    """The CLI's word for it: a load whose lock is taken between its batches exits 2 with that one line."""
    script = tmp_path / "load.py"
    script.write_text(textwrap.dedent("""
        import sys
        from graphlink.cli import main
        from graphlink.store import neo4j

        original = neo4j.Store._element_batches

        def batches(*args, **kwargs):
            for i, item in enumerate(original(*args, **kwargs)):
                yield item
                if i == 0:                                   # another process breaks the lock and takes it
                    with neo4j.connect() as other:
                        other._query("MATCH (l:LoadLock {release: $n}) DELETE l", {"n": sys.argv[-1]})
                        other._query("CREATE (:LoadLock {release: $n, token: 'thief', host: 'elsewhere', pid: 2, "
                                     "at: datetime(), heartbeat: datetime()})", {"n": sys.argv[-1]})

        neo4j.Store._element_batches = staticmethod(batches)
        sys.argv = ["graphlink", *sys.argv[1:]]
        main()
    """))
    proc = subprocess.run([sys.executable, str(script), "load", str(releases["relA"][0]), "--bulk", "never",
                           "--name", name], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.strip().splitlines() == [
        f"graphlink: error: another process broke the load lock of release {name!r}; the release may be "
        "incomplete -- load it again"], proc.stderr
    assert "loaded in" not in proc.stdout
    assert neo4j_store.release_info(name).status != "loaded"


def test_who_is_alive() -> None:
    """Liveness from the lock's fields alone (no server): this machine looks at the process, another machine's
    lock lives while its heartbeat is younger than STALE_BEATS of its intervals."""
    me = store_module._lock_owner()
    assert store_module._lock_alive(dict(me), 10_000.0, me)                   # our own process, however quiet
    other = {**me, "host": "elsewhere", "interval": 10.0}
    limit = store_module.STALE_BEATS * 10.0
    assert store_module._lock_alive(other, limit - 1, me)
    assert not store_module._lock_alive(other, limit + 1, me)
    assert store_module._lock_alive({**other, "interval": None}, store_module.STALE_BEATS * store_module.HEARTBEAT - 1,
                                    me)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    time.sleep(0.1)
    assert not store_module._lock_alive({**me, "pid": dead.pid}, 0.0, me)     # gone here, whatever its heartbeat
