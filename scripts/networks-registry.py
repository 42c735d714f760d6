#!/usr/bin/env python3
"""Writes src/config/networks-registry.json from The Graph's networks registry.

Usage: python3 scripts/networks-registry.py TheGraphNetworksRegistry.json COMMIT

The input is `public/TheGraphNetworksRegistry.json` of https://github.com/graphprotocol/networks-registry (MIT License,
Copyright (c) 2024 Pinax) at COMMIT. Only what naming a chain takes is kept: each network's id, its aliases, its
CAIP-2 id (`eip155:<chain id>` for EVM chains) and its full name, with the registry's version.
"""
import json
import sys

src, commit = sys.argv[1], sys.argv[2]
with open(src, encoding="utf-8") as f:
    registry = json.load(f)
out = {
    "source": f"https://github.com/graphprotocol/networks-registry public/TheGraphNetworksRegistry.json at commit {commit} "
    "(MIT License, Copyright (c) 2024 Pinax); only id, aliases, caip2Id and fullName kept: scripts/networks-registry.py",
    "version": registry["version"],
    "updatedAt": registry["updatedAt"],
    "networks": [
        {"id": n["id"], "caip2Id": n["caip2Id"], "aliases": n.get("aliases", []), "fullName": n["fullName"]}
        for n in registry["networks"]
    ],
}
with open("src/config/networks-registry.json", "w", encoding="utf-8") as f:
    json.dump(out, f, indent=1, ensure_ascii=False)
    f.write("\n")
print(f"src/config/networks-registry.json: version {out['version']}, {len(out['networks'])} networks")
