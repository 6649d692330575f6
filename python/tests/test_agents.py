"""Agents written in Python against a C judge process (`daolease judge`):
issue 15 item 1 ("an agent written in Python claims, works under and
releases leases against a C judge in the suite"); holder.md (the bound,
may_act, renewals, release with commit)."""
import os
import threading
import time

import pytest

import daolease
from daolease import DaoleaseError, Holder, LeaseLost, Stream


def test_python_agents_claim_work_items_against_c_judge(site, judge_process):
    """Three Python agents claim six work items each once (issue 15 item 1;
    holder.md: renew while working, release with commit when done)."""
    items = [f"item-{i}" for i in range(6)]
    done, lock = [], threading.Lock()
    tokens = set()

    def agent(name, mine):
        with Holder.from_config(site.path(name + ".json")) as h:
            for item in mine:
                with h.claim(item, duration={"ms": 900}, wait=20) as lease:
                    assert lease.may_act()
                    assert 0 < lease.remaining() <= 0.9
                    time.sleep(0.3)  # longer than a renewal interval (a third)
                    lease.check()
                    with lock:
                        done.append((item, lease.token))
                        tokens.add(lease.token)
                # released with commit; may_act is false from the release on
                assert not h.may_act(lease.token)

    threads = [threading.Thread(target=agent, args=(a, items[i::3]))
               for i, a in enumerate(site.agents)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(i for i, _ in done) == items
    assert len(tokens) == 6  # one lease id (fencing token) each
    time.sleep(0.5)  # let the judge record the lapses (cause release)
    judge_process.send_signal(2)
    judge_process.wait(10)
    report = site.audit()
    assert report["exit"] == 0, report["summary"]
    causes = {l["lease"]: l["cause"] for l in report["leases"]}
    assert sorted(causes) == sorted(tokens)
    assert set(causes.values()) == {"release"}


def test_lease_lost_at_bound_raises_in_body(site, judge_process):
    """holder.md, the bound: when renewals stop succeeding (here the agent's
    own medium is sealed) the holder reaches its bound, may_act turns false
    and LeaseLost is raised inside the with body (issue 15 item 1)."""
    h = Holder.from_config(site.path("agent-1.json"))
    try:
        with pytest.raises(LeaseLost) as exc:
            with h.claim("item-x", duration={"ms": 600}, wait=20) as lease:
                Stream.open(site.path("agent-1.dls"), append=True).seal()
                deadline = time.monotonic() + 5
                while time.monotonic() < deadline:
                    time.sleep(0.01)
                pytest.fail("the with body was not interrupted")
        assert "bound" in str(exc.value)
        # the phrase once, whatever the C event's text begins with
        assert str(exc.value).count("reached its bound") == 1, str(exc.value)
        assert not lease.may_act()
        assert lease.remaining() == 0.0
    finally:
        h.close()


def test_refused_and_errors_carry_c_names(site, judge_process):
    """Errors raised as Python exceptions carrying the C error name (issue
    15 item 1): an oversized subject, an unknown lease, a reentrant refusal."""
    with Holder.from_config(site.path("agent-2.json")) as h:
        lease = h.acquire("item-r", duration={"s": 2}, wait=20)
        with pytest.raises(daolease.Refused) as exc:
            h.acquire("item-r", duration={"s": 2}, wait=20)  # judge.md: reentrant
        assert exc.value.reason == "reentrant"
        h.release(lease.token, commit=True)
        with pytest.raises(DaoleaseError) as e2:
            h.remaining_ns(987654)
        assert e2.value.name == "DLS_ERR_NO_LEASE"
        with pytest.raises(DaoleaseError) as e3:
            h.propose("x" * 2000)  # vocabulary.md: a subject is at most 1024 bytes
        assert e3.value.name == "DLS_ERR_INVAL"
        assert e3.value.code == -2


def test_many_leases_from_one_loop(site, judge_process):
    """propose / step / release for several leases from one loop, no
    thread (issue 15 item 1: many leases from one loop)."""
    with Holder.from_config(site.path("agent-3.json")) as h:
        handles = {h.propose(f"batch-{i}", duration={"s": 2}): f"batch-{i}" for i in range(4)}
        leases = {}
        deadline = time.monotonic() + 20
        while len(leases) < 4 and time.monotonic() < deadline:
            for e in h.step():
                if e.kind == "granted":
                    leases[handles[e.proposal]] = e.lease
            time.sleep(0.01)
        assert len(leases) == 4
        assert all(h.may_act(l) for l in leases.values())
        info = h.lease_info(leases["batch-0"])
        assert info["subject"] == "batch-0" and info["state"] == "held"
        for l in leases.values():
            h.release(l, commit=True)
        assert not any(h.may_act(l) for l in leases.values())


def test_aclaim_cancels_the_task_when_lost(site, judge_process):
    """asyncio (issue 15 item 1: cancellation when the lease is lost): the
    task in `async with holder.aclaim(...)` is cancelled at the bound and
    sees LeaseLost; a clean block releases with commit."""
    import asyncio

    async def main():
        h = Holder.from_config(site.path("agent-3.json"))
        try:
            async with h.aclaim("async-ok", duration={"s": 2}, wait=20) as lease:
                assert lease.may_act()
            assert not h.may_act(lease.token)
            with pytest.raises(LeaseLost):
                async with h.aclaim("async-lost", duration={"ms": 600}, wait=20) as lost:
                    Stream.open(site.path("agent-3.dls"), append=True).seal()
                    await asyncio.sleep(5)
            assert not lost.may_act()
        finally:
            h.close()

    asyncio.run(main())


def test_forked_child_cannot_use_the_parents_holder(site, judge_process):
    """holder.md, "A holder belongs to the process that made it"; python.md,
    fork(): a child forked inside ``with h.claim(...)`` that leaves the block
    appends nothing (before, it released the parent's lease with commit and
    the judge lapsed it by release), and every call it makes on the holder
    or the lease raises ForkedHolder. The parent keeps acting on its lease
    and releases it itself."""
    rfd, wfd = os.pipe()
    child = False
    with Holder.from_config(site.path("agent-1.json")) as h:
        with h.claim("fork-item", duration={"ms": 900}, wait=20) as lease:
            pid = os.fork()
            if pid == 0:
                child = True
                os.close(rfd)
            else:
                os.close(wfd)
                _, status = os.waitpid(pid, 0)
                with os.fdopen(rfd) as f:
                    said = f.read()
                assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, said
                assert said == "refused 7 calls\n", said
                # several judge passes (cadence 100 ms) and renewals later the
                # parent's lease is still held: no release reached the judge
                time.sleep(1.5)
                assert lease.may_act() and not lease.lost
                token = lease.token
        if child:
            _child_after_block(h, lease, wfd)  # never returns
    time.sleep(0.5)  # the judge records the parent's release
    judge_process.send_signal(2)
    judge_process.wait(10)
    report = site.audit()
    assert report["exit"] == 0, report["summary"]
    assert [(l["lease"], l["cause"]) for l in report["leases"]] == [(token, "release")]


def _child_after_block(h, lease, wfd):
    """In the forked child, after leaving the claim's block: count the calls
    refused with ForkedHolder, report on the pipe, exit without Python's
    clean-up (os._exit)."""
    code, refused, notes = 0, 0, []
    calls = [lambda: h.may_act(lease.token), lambda: h.step(),
             lambda: h.release(lease.token, commit=True), lambda: h.propose("other"),
             lambda: lease.check(), lambda: h.lease_info(lease.token),
             lambda: h.acquire("other", wait=1)]
    try:
        for call in calls:
            try:
                call()
                notes.append("a call was accepted")
            except daolease.ForkedHolder as e:
                if "belongs to process" in str(e) and e.name == "DLS_ERR_STATE":
                    refused += 1
                else:
                    notes.append(f"unclear refusal: {e}")
        h.close()  # forgets the handles, appends nothing
    except BaseException as e:  # noqa: BLE001 - the child must reach os._exit
        notes.append(repr(e))
    os.write(wfd, (f"refused {refused} calls\n" + "".join(n + "\n" for n in notes)).encode())
    if notes:
        code = 1
    os._exit(code)
