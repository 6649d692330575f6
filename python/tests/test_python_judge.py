"""A Python judge (the owner's loop, a Python reclaim callback) with C
`daolease run` holders, and a work queue that never grants a finished
item again (issue 15 items 1 and 4; judge.md: reclaim, grant policy)."""
import json
import os
import subprocess
import threading
import time

import pytest

import daolease
from daolease import Holder, Judge, LeaseLost
from conftest import daolease_bin


class Owner:
    """A work queue: items finished (released with commit) are refused."""

    def __init__(self):
        self.reclaims = []
        self.finished = set()
        self.granted = []

    def on_granted(self, lease):
        self.granted.append(lease)

    def reclaim(self, subject, lease, cause, commit):
        self.reclaims.append((subject, lease, cause, commit))
        if commit:
            self.finished.add(subject)
        return True

    def policy(self, ask):
        if ask["subject"] in self.finished:
            return ("refuse", "finished")
        return None  # the default policy's answer


@pytest.fixture
def owner_judge(site):
    owner = Owner()
    j = Judge.from_config(site.path("judge.json"), reclaim=owner.reclaim, policy=owner.policy,
                            granted=owner.on_granted)
    stop = threading.Event()
    t = threading.Thread(target=j.run, args=(stop.is_set,))
    t.start()
    yield owner, j
    stop.set()
    t.join(10)
    j.close()


def run(site, agent, subject, *cmd, wait="10s"):
    return subprocess.run([daolease_bin(), "run", "--config", site.path(agent + ".json"),
                           "--subject", subject, "--wait", wait, "--"] + list(cmd),
                          capture_output=True, text=True, timeout=60)


def wait_for(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return False


def test_python_judge_with_c_run_holders(site, owner_judge):
    """C holders (`daolease run`) under a Python judge: each item's command
    runs with DAOLEASE_LEASE set, exits 0, the release carries commit and
    the Python reclaim callback sees cause release with commit (issue 15
    item 1; cli.md `run`)."""
    owner, j = owner_judge
    procs = [subprocess.Popen([daolease_bin(), "run", "--config", site.path(a + ".json"),
                               "--subject", f"item-{i}", "--wait", "10s", "--", "sh", "-c",
                               'test -n "$DAOLEASE_LEASE" && sleep 0.2'],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for i, a in enumerate(site.agents)]
    for p in procs:
        assert p.wait(60) == 0, p.stderr.read()
    assert wait_for(lambda: len(owner.reclaims) == 3)
    assert sorted(s for s, _, _, _ in owner.reclaims) == ["item-0", "item-1", "item-2"]
    assert all(c == "release" and commit for _, _, c, commit in owner.reclaims)
    assert not j.callback_errors


def test_finished_item_not_granted_again(site, owner_judge):
    """Issue 15 item 4: an agent releases a finished item with commit, the
    owner learns it through the reclaim callback, and its grant policy
    refuses later proposals for that item (`run` exits 75: no lease)."""
    owner, j = owner_judge
    first = run(site, "agent-1", "item-9", "true")
    assert first.returncode == 0, first.stderr
    assert wait_for(lambda: "item-9" in owner.finished)
    again = run(site, "agent-2", "item-9", "true")
    assert again.returncode == 75
    assert "finished" in again.stderr
    # an item whose command failed is released without commit: granted again
    failed = run(site, "agent-1", "item-10", "false")
    assert failed.returncode == 1
    assert wait_for(lambda: any(s == "item-10" for s, *_ in owner.reclaims))
    assert "item-10" not in owner.finished
    retry = run(site, "agent-2", "item-10", "true")
    assert retry.returncode == 0, retry.stderr


def test_owner_end_raises_lease_lost_in_python_agent(site, owner_judge):
    """judge.md: the owner ends a lease (cause policy); the Python holder
    observes `lapsed` and LeaseLost is raised in the with body (issue 15
    item 1)."""
    owner, j = owner_judge
    with Holder.from_config(site.path("agent-3.json")) as h:
        with pytest.raises(LeaseLost) as exc:
            with h.claim("item-e", duration={"s": 2}, wait=20) as lease:
                j.end(lease.token)
                time.sleep(5)
                pytest.fail("not interrupted")
        assert "policy" in str(exc.value)
        assert not lease.may_act()
    assert wait_for(lambda: any(c == "policy" for *_, c, _ in owner.reclaims))


def test_judge_errors_carry_c_names(site, owner_judge):
    """A second judge on a held journal: DLS_ERR_JOURNAL_LOCKED (judge.md,
    the journal lock); ending an unknown lease: DLS_ERR_UNKNOWN_LEASE."""
    owner, j = owner_judge
    with pytest.raises(daolease.DaoleaseError) as e:
        Judge.from_config(site.path("judge.json"), reclaim=owner.reclaim)
    assert e.value.name in ("DLS_ERR_JOURNAL_LOCKED", "DLS_ERR_LOCKED")


def test_granted_callback_and_lease_lists(site, owner_judge):
    """The owner's view from Python (issue 15 item 2): `granted` names each
    grant; leases() lists live leases all, by subject, by holder, with a
    due-by reading after the last observation."""
    owner, j = owner_judge
    with Holder.from_config(site.path("agent-1.json")) as h:
        with h.claim("view-1", duration={"s": 2}, wait=20) as lease:
            assert wait_for(lambda: any(g["lease"] == lease.token for g in owner.granted))
            g = [g for g in owner.granted if g["lease"] == lease.token][0]
            assert (g["subject"], g["holder"]) == ("view-1", "agent-1")
            mine = j.leases(holder="agent-1")
            assert [l["lease"] for l in mine] == [lease.token]
            by_subject = j.leases(subject="view-1")
            assert by_subject[0]["holder"] == "agent-1"
            assert by_subject[0]["due_by"] > by_subject[0]["last_observation"]
            assert j.leases(holder="agent-2") == []
            assert lease.token in [l["lease"] for l in j.leases()]


def test_status_agrees_with_the_judge(site, owner_judge):
    """`daolease status` (read from the files) reports the due-by reading
    the running judge's own view reports, for a lease whose holder stopped
    renewing (issue 15 items 2 and 3: both on the judge's ticks)."""
    import json
    owner, j = owner_judge
    with Holder.from_config(site.path("agent-2.json")) as h:
        lease = h.acquire("agree", duration={"s": 3}, wait=20)
        time.sleep(1.2)          # at least one renewal (every second)
        h.stop()                 # no more steps: no more renewals
        time.sleep(0.4)          # the judge drains the last one and marks it
        mine = j.leases(subject="agree")[0]
        out = subprocess.run([daolease_bin(), "status", "--journal", site.journal,
                              "--grantor", "arbiter", "--keyring", site.keyring, "--json",
                              "--media"] + site.media, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        rows = [json.loads(l) for l in out.stdout.splitlines()]
        row = [r for r in rows if r.get("lease") == lease.token][0]
        assert row["last_renewal"] == mine["last_observation"]
        assert row["due_by"] == mine["due_by"]
        assert rows[-1]["verified"] is True


def test_standby_takes_over_when_its_judge_closes(site):
    """judge.md rev 5, Standby judges (docs/standby.md): a Python standby
    on the judge's configuration follows without acting, and takes over,
    once, when the judge it stands by for releases the journal."""
    reclaims, took = [], []
    active = Judge.from_config(site.path("judge.json"), reclaim=lambda *a: True)
    active.step()
    standby = Judge.from_config(site.path("judge.json"),
                                reclaim=lambda *a: reclaims.append(a) or True,
                                standby=True, took_over=took.append)
    r = standby.step()
    assert r["standby"] and not r["took_over"] and r["appended"] == 0
    active.step()
    r = standby.step()
    assert r["standby"] and took == []
    active.close()  # its lock goes with it
    r = standby.step()
    assert r["took_over"] and not r["standby"] and r["restarted"] and r["mark"]
    assert took == [r["pass"]]
    r = standby.step()
    assert not r["standby"] and not r["took_over"]
    standby.close()


def test_from_config_refuses_realtime_ticks(tmp_path):
    """docs/config.md, ticks: realtime tick streams shared by machines are
    built in daolease judge only; Judge.from_config refuses them, naming the
    key, rather than judging on this host's monotonic clock unasked."""
    cfg = tmp_path / "judge.json"
    cfg.write_text(json.dumps({
        "party": "arbiter", "key": "arbiter.secret", "keyring": "keyring",
        "journal": "journal.dls", "media": ["a1.dls"],
        "ticks": {"realtime": "c1", "streams": ["t1", "t2"], "own": "t1"}}))
    with pytest.raises(daolease.DaoleaseError) as e:
        Judge.from_config(str(cfg), reclaim=lambda *a: True)
    assert e.value.name == "DLS_ERR_CONFIG"
    assert 'key "ticks"' in str(e.value)


def test_from_config_refuses_a_missing_journal(site):
    """docs/config.md create_journal: Judge.from_config refuses a missing
    journal, naming it and the key, and creates nothing — never a silent
    fresh ledger; with "create_journal": true it starts one."""
    cfg = json.load(open(site.path("judge.json")))
    cfg["journal"] = "new-journal.dls"
    path = site.path("new-judge.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    with pytest.raises(daolease.DaoleaseError) as e:
        Judge.from_config(path, reclaim=lambda *a: True)
    assert e.value.name == "DLS_ERR_NOTFOUND"
    assert "create_journal" in str(e.value)
    assert not os.path.exists(site.path("new-journal.dls"))
    cfg["create_journal"] = True
    with open(path, "w") as f:
        json.dump(cfg, f)
    j = Judge.from_config(path, reclaim=lambda *a: True)
    j.close()
    assert os.path.exists(site.path("new-journal.dls"))


def test_from_config_reads_the_drain_keys(site):
    """docs/config.md drain_budget, drain_per_s: the file daolease judge
    reads is read here with the same keys — accepted and given to the judge
    (judge.md, The pass, step 2), and a bad value refused naming the key."""
    cfg = json.load(open(site.path("judge.json")))
    cfg.update({"drain_budget": 1, "drain_per_s": 0})
    path = site.path("drain-judge.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    j = Judge.from_config(path, reclaim=lambda *a: True)
    j.close()
    cfg["drain_per_s"] = -1
    with open(path, "w") as f:
        json.dump(cfg, f)
    with pytest.raises(daolease.DaoleaseError) as e:
        Judge.from_config(path, reclaim=lambda *a: True)
    assert "drain_per_s" in str(e.value)
