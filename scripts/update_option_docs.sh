#!/usr/bin/env bash
# Rewrites docs/options.md and the command synopsis in README.md ("## Commands")
# from the option table compiled into ptxbench. tests/cli/test_option_table.cpp
# fails while either is stale.
#   scripts/update_option_docs.sh [path/to/ptxbench]   (default build/bin/ptxbench)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin/ptxbench}
"$bin" help options > docs/options.md
synopsis=$("$bin" help synopsis)
SYNOPSIS="$synopsis" python3 - <<'PY'
import os, re
text = open("README.md", encoding="utf-8").read()
block = "## Commands\n\n```\n" + os.environ["SYNOPSIS"] + "\n```\n"
new, n = re.subn(r"## Commands\n\n```\n.*?```\n", lambda m: block, text, count=1, flags=re.S)
if n != 1:
    raise SystemExit("README.md: no '## Commands' section with a ``` block")
open("README.md", "w", encoding="utf-8").write(new)
PY
echo "wrote docs/options.md and README.md's command synopsis"
