#!/usr/bin/env python3
"""Regenerates the facts table of docs/policy.md from FACTS in src/policy/facts.rs:
    python3 docs/facts_table.py   (from the repository root)
"""
import re
src=open('src/policy/facts.rs').read()
block=src[src.index('facts! {'):src.index('\n}\n', src.index('facts! {'))]
rows=[]
for m in re.finditer(r'^\s*"([^"]+)", "([^"]+)", ([A-Z| ]+), "((?:[^"\\]|\\.)*)";', block, re.M):
    path, ty, subj, doc = m.groups()
    subj=subj.strip()
    if subj=='ALL': s='all'
    else:
        bits=[b.strip() for b in subj.split('|')]
        names=[]
        for b,n in [('R','requests'),('V','reservations'),('T','teams'),('D','policy and config')]:
            if b in bits: names.append(n)
        s=', '.join(names)
    rows.append(f"| `{path}` | {ty} | {s} | {doc} |")
doc=open('docs/policy.md').read()
start=doc.index('| fact | type | subjects | meaning |')
end=doc.index('\n\n', start)
doc=doc[:start]+'| fact | type | subjects | meaning |\n| --- | --- | --- | --- |\n'+'\n'.join(rows)+doc[end:]
open('docs/policy.md','w').write(doc)
print(len(rows))
