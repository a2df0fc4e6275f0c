"""Drop volatile per-cell execution timestamps from notebooks (their outputs stay committed)."""
import glob
import json

for path in sorted(glob.glob("course/*.ipynb") + glob.glob("labs/*/*.ipynb")):
    with open(path, encoding="utf-8") as f:
        nb = json.load(f)
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop("execution", None)
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
