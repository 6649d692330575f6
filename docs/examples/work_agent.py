#!/usr/bin/python3
"""work_agent.py — a Python agent that claims work items (docs/python.md).

    work_agent.py CONFIG OUTDIR ITEM...

CONFIG is the file `daolease run` reads (party, key, keyring, grantor,
journal, medium). For each item the agent claims a lease, works under it
— checking may_act before every write and passing the lease id (its
fencing token) to the "resource", here a file per item — and releases it
with commit when the item is done. An item someone else finished is
refused by the owner ("finished") and skipped; one held by another agent
is waited for.
"""
import os
import sys
import time

import daolease


def work_on(lease, item, outdir):
    """Three steps of work; each write carries the fencing token."""
    path = os.path.join(outdir, item)
    for step in range(3):
        if not lease.may_act():             # never write after the bound
            raise daolease.LeaseLost(f"{item}: lease {lease.token} lost")
        with open(path, "a") as f:
            f.write(f"{lease.token} {step}\n")  # the resource checks the token
        time.sleep(0.1)


def main():
    config, outdir, items = sys.argv[1], sys.argv[2], sys.argv[3:]
    with daolease.Holder.from_config(config) as holder:
        for item in items:
            try:
                with holder.claim(item, duration={"s": 2}, wait=30) as lease:
                    work_on(lease, item, outdir)
                print(f"{item}: done under lease {lease.token}")   # released with commit
            except daolease.Refused as e:
                print(f"{item}: refused ({e.reason})")
            except daolease.LeaseLost as e:
                print(f"{item}: lost: {e}")                          # the owner re-grants it


if __name__ == "__main__":
    main()
