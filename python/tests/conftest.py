"""Fixtures: a folder with keys, a keyring, a journal, agent media and the
configuration files `daolease judge` and `daolease run` read
(docs/config.md)."""
import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import daolease  # noqa: E402

ROOT = os.environ.get("DLS_SOURCE_ROOT", os.path.dirname(os.path.dirname(HERE)))
BUILD = os.environ.get("DLS_BUILD_ROOT", os.path.join(ROOT, "build"))


def daolease_bin():
    return os.environ.get("DAOLEASE_BIN", os.path.join(BUILD, "cli", "daolease"))


class Site:
    """A folder: arbiter + N agents, keyring, journal.dls, agent-i.dls,
    judge.json and agent-i.json."""

    def __init__(self, path, agents=3, **judge_extra):
        self.dir = str(path)
        self.agents = [f"agent-{i + 1}" for i in range(agents)]
        lines = [daolease.keygen("arbiter", self.dir)]
        for a in self.agents:
            lines.append(daolease.keygen(a, self.dir))
        self.keyring = os.path.join(self.dir, "keyring")
        with open(self.keyring, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.journal = os.path.join(self.dir, "journal.dls")
        daolease.Stream.create(self.journal).close()
        self.media = []
        for a in self.agents:
            p = os.path.join(self.dir, a + ".dls")
            daolease.Stream.create(p).close()
            self.media.append(p)
            self.write(a + ".json", {"party": a, "key": a + ".secret", "keyring": "keyring",
                                     "grantor": "arbiter", "journal": "journal.dls",
                                     "medium": a + ".dls", "duration": {"s": 2}})
        judge = {"party": "arbiter", "key": "arbiter.secret", "keyring": "keyring",
                 "journal": "journal.dls", "media": [a + ".dls" for a in self.agents],
                 "tolerance": {"ms": 250}, "cadence": {"ms": 100}, "duration": {"s": 2}}
        judge.update(judge_extra)
        self.write("judge.json", judge)

    def write(self, name, obj):
        with open(os.path.join(self.dir, name), "w") as f:
            json.dump(obj, f)

    def path(self, name):
        return os.path.join(self.dir, name)

    def audit(self):
        return daolease.audit(self.journal, "arbiter", self.keyring, self.media)


@pytest.fixture
def site(tmp_path):
    return Site(tmp_path)


@pytest.fixture
def judge_process(site):
    """`daolease judge --config judge.json` running over the site."""
    p = subprocess.Popen([daolease_bin(), "judge", "--config", site.path("judge.json")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    yield p
    if p.poll() is None:
        p.send_signal(2)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
