"""docs/examples/work_agent.py, the worked example of docs/python.md, run
as written: two Python agents claim the same work items under a C judge
(`daolease judge`); every item is done once, each line of its file carries
one lease id (the fencing token) (issue 15 item 1)."""
import os
import subprocess
import sys

from conftest import ROOT

EXAMPLE = os.path.join(ROOT, "docs", "examples", "work_agent.py")


def test_work_agent_example(site, judge_process, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    items = ["inv-1", "inv-2", "inv-3"]
    agents = [subprocess.Popen([sys.executable, EXAMPLE, site.path(a + ".json"), str(out)] +
                               items, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True) for a in site.agents[:2]]
    outputs = [a.communicate(timeout=120) for a in agents]
    for a, (o, e) in zip(agents, outputs):
        assert a.returncode == 0, e
    done = [l for o, _ in outputs for l in o.splitlines() if ": done under lease " in l]
    # each agent does every item in turn (the C judge's default policy
    # grants a free item again); every file's lines name one lease each run
    assert sorted({l.split(":")[0] for l in done}) == items
    for item in items:
        lines = (out / item).read_text().splitlines()
        tokens = [l.split()[0] for l in lines]
        # three writes per tenure, never interleaved: tenures do not overlap
        assert len(tokens) % 3 == 0
        for i in range(0, len(tokens), 3):
            assert len(set(tokens[i:i + 3])) == 1
