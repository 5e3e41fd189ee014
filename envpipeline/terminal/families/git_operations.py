"""git-operations: investigate and change a repository built at image build time.

A setup script (run by a Dockerfile RUN step, then removed) builds ``/app/repo`` with fixed
authors and dates: a flag string introduced by a commit that names it, a bad configuration commit
to revert, releases and feature branches merged with merge commits. Depth knobs add rounds of
flag-file changes and merges; breadth knobs add history and operations (branch, annotated tag,
per-author counts). Its edge cases, each present with the knob-set probability: the flag removed
and re-added by later commits, which name it (``latest_introduction``; without it the rounds only
tune another line, so the introduction is the only commit changing the flag's occurrences),
commit messages naming the flag in commits that do not add it, one before it exists and one after
(``greps_commit_messages``; without it only commits that change the flag's occurrences name it),
and commits after the bad one on ``main`` (``rewrites_history``, a solver that rewinds ``main`` to
the bad commit to revert it; without it the bad commit is the tip of ``main``).
"""

from __future__ import annotations

import random
from typing import Any

from envpipeline.terminal.families._script_kit import SolverProgram, edited_program, fail_fast_script
from envpipeline.terminal.families.base import (
    STANDARD_DOCKERFILE,
    STANDARD_TEST_SH,
    Knobs,
    TaskFamily,
    TaskParts,
    knob,
)
from envpipeline.terminal.families.registry import register_family

AUTHORS = [
    ("Ana Silva", "ana@dev.example"),
    ("Ben Okoro", "ben@dev.example"),
    ("Chen Wu", "chen@dev.example"),
    ("Dana Berg", "dana@dev.example"),
    ("Eli Moreau", "eli@dev.example"),
]
FLAGS = ["ORBIT", "HALCYON", "TUNDRA", "MERIDIAN", "SPARROW", "QUASAR"]
VERBS = ["Tweak", "Refactor", "Document", "Fix typo in", "Clean up", "Polish", "Extend", "Simplify"]
THINGS = ["logging", "retry loop", "parser", "CLI help", "error messages", "cache layer", "tests", "metrics"]
FILLER_FILES = ["README.md", "CHANGELOG.md", "src/app.py", "src/utils.py"]
FEATURES = ["search", "billing", "export", "audit"]

TEST_BODY = r"""
def git(*args):
    done = subprocess.run(["git", "-c", "safe.directory=*", "-C", "/app/repo", *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def read(path):
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        fail(f"{path} missing")


history = git("log", "main", "--format=%H%x09%s")
if history is None:
    fail("branch main is missing")
by_subject = {}
for line in history.splitlines():
    sha, subject = line.split("\t", 1)
    by_subject.setdefault(subject, []).append(sha)
missing = [s for s in EXPECTED["subjects"] if s not in by_subject]
if missing:
    fail(f"history of main was rewritten; original commits missing: {missing[:3]}")
if len(by_subject[EXPECTED["bad"]]) != 1:
    fail("the reverted commit must stay in history exactly once")
if read("/app/results/introduced.txt") != by_subject[EXPECTED["intro"]][0]:
    fail("introduced.txt does not hold the full hash of the commit that first added the flag")
if git("symbolic-ref", "HEAD") != "refs/heads/main":
    fail("HEAD must be on branch main")
if git("status", "--porcelain") != "":
    fail("working tree of /app/repo is not clean")
files = git("ls-tree", "-r", "--name-only", "main")
if sorted((files or "").splitlines()) != sorted(EXPECTED["tree"]):
    fail(f"files on main differ: expected {sorted(EXPECTED['tree'])}")
for path, content in EXPECTED["tree"].items():
    if git("show", f"main:{path}") != content.strip():
        fail(f"{path} on main does not have the expected content (was exactly the bad commit reverted?)")
if "branch" in EXPECTED:
    name, subject = EXPECTED["branch"]
    if git("rev-parse", "--verify", "-q", f"refs/heads/{name}") != by_subject[subject][0]:
        fail(f"branch {name} must point at the commit '{subject}'")
if "tag" in EXPECTED:
    name, subject = EXPECTED["tag"]
    if git("cat-file", "-t", f"refs/tags/{name}") != "tag":
        fail(f"tag {name} must exist and be annotated")
    if git("rev-parse", f"{name}^{{commit}}") != git("rev-parse", f"{by_subject[subject][0]}^"):
        fail(f"tag {name} must point at the parent of '{subject}'")
if "authors" in EXPECTED:
    rows = [line.strip() for line in read("/app/results/authors.csv").splitlines() if line.strip()]
    if rows != EXPECTED["authors"]:
        fail(f"authors.csv expected {EXPECTED['authors']}, got {rows}")
"""


class GitOperationsKnobs(Knobs):
    """Knobs of the git-operations family."""

    n_commits: int = knob(8, 4, 120, "breadth", "filler commits in the history")
    n_ops: int = knob(2, 2, 5, "breadth", "operations: find, revert, + branch, annotated tag, author counts")
    reintroductions: int = knob(
        1,
        1,
        3,
        "depth",
        "rounds of flag-file changes (removing and re-adding the flag when that edge case is present)",
    )
    merges: int = knob(
        0, 0, 3, "depth", "feature branches merged with merge commits (the first adds the flag)"
    )


class GitOperationsFamily(TaskFamily[GitOperationsKnobs]):
    """Pickaxe search, safe revert, branches and tags on a generated repository."""

    name = "git-operations"
    category = "version-control"
    description = (
        "Investigate and modify a git repository: find where a string was introduced, revert, branch, tag."
    )
    skills = ["git", "bash", "csv"]
    knob_model = GitOperationsKnobs
    presets = {
        "easy": {"n_commits": 8, "n_ops": 2, "reintroductions": 1, "merges": 0},
        "medium": {"n_commits": 20, "n_ops": 3, "reintroductions": 2, "merges": 1},
        "hard": {"n_commits": 50, "n_ops": 5, "reintroductions": 3, "merges": 3},
    }
    variants = ("latest_introduction", "greps_commit_messages", "rewrites_history")
    edge_case_axes = {
        "latest_introduction": "depth",
        "greps_commit_messages": "breadth",
        "rewrites_history": "breadth",
    }

    def build(
        self, rng: random.Random, knobs: GitOperationsKnobs, seed: int, edge_cases: frozenset[str]
    ) -> TaskParts:
        flag = f"FEATURE_{rng.choice(FLAGS)}"
        authors = rng.sample(AUTHORS, 3 + knobs.n_ops // 3)
        old_timeout, new_timeout = rng.choice([30, 45, 60]), rng.choice([1, 2, 5])
        files: dict[str, str] = {
            "README.md": "# inventory-service\n\nA small service.\n",
            "CHANGELOG.md": "# Changelog\n",
            "src/app.py": "import utils\n\n\ndef main():\n    return utils.run()\n",
            "src/utils.py": "def run():\n    return 0\n",
            "config/settings.ini": f"[server]\nport = {rng.randint(8000, 8999)}\ntimeout = {old_timeout}\nworkers = 4\n",
        }
        script = [
            "#!/bin/bash",
            "set -e",
            "export GIT_CONFIG_NOSYSTEM=1 HOME=/tmp/repo-setup",
            "mkdir -p /app/repo /tmp/repo-setup && cd /app/repo",
            "git init -q -b main",
            'c() { GIT_AUTHOR_NAME="$1" GIT_AUTHOR_EMAIL="$2" GIT_COMMITTER_NAME="$1" GIT_COMMITTER_EMAIL="$2" '
            'GIT_AUTHOR_DATE="$3" GIT_COMMITTER_DATE="$3" git "${@:5}" -m "$4"; }',
        ]
        subjects: list[str] = []
        counts: dict[str, int] = {}
        clock = [1_704_100_000 + rng.randint(0, 9_000_000)]

        def commit(subject: str, changes: dict[str, str | None], merge: str | None = None) -> None:
            for path, content in changes.items():
                if content is None:
                    files.pop(path, None)
                    script.append(f"git rm -q '{path}'")
                else:
                    files[path] = content
                    script.append(
                        f"mkdir -p \"$(dirname '{path}')\"\ncat > '{path}' <<'EOF_FILE'\n{content}EOF_FILE"
                    )
            name, email = rng.choice(authors)
            clock[0] += rng.randint(600, 90_000)
            if merge:
                script.append(f'c "{name}" "{email}" "{clock[0]} +0000" "{subject}" merge -q --no-ff {merge}')
            else:
                script.append("git add -A")
                script.append(f'c "{name}" "{email}" "{clock[0]} +0000" "{subject}" commit -q')
                counts[email] = counts.get(email, 0) + 1
            subjects.append(subject)

        used: set[str] = set()

        def filler(allow_settings: bool) -> None:
            path = rng.choice(FILLER_FILES + (["config/settings.ini"] if allow_settings else []))
            subject = f"{rng.choice(VERBS)} {rng.choice(THINGS)}"
            while subject in used:
                subject = f"{rng.choice(VERBS)} {rng.choice(THINGS)} ({len(used)})"
            used.add(subject)
            line = f"loglevel_{len(used)} = info\n" if path.endswith(".ini") else f"# {subject.lower()}\n"
            commit(subject, {path: files[path] + line})

        commit("Initial commit", dict(files))
        per_gap = max(1, knobs.n_commits // (5 + knobs.reintroductions * 2))
        releases: list[str] = []

        def gap(allow_settings: bool = True) -> None:
            for _ in range(per_gap):
                filler(allow_settings)
                if rng.random() < 0.25:
                    releases.append(f"Release v1.{len(releases) + 1}")
                    commit(
                        releases[-1], {"CHANGELOG.md": files["CHANGELOG.md"] + f"\n## v1.{len(releases)}\n"}
                    )

        # Edge cases: messages naming the flag outside the commits that change it, re-additions,
        # commits after the bad one (each planted only when present).
        mention = f" {flag}" if "greps_commit_messages" in edge_cases else ""
        readd = "latest_introduction" in edge_cases
        gap()
        commit(
            f"Discuss{mention} rollout plan in README",
            {"README.md": files["README.md"] + "\nRollout plan: TBD.\n"},
        )
        gap()
        flag_file = f"{flag} = True\nRETRIES = 3\n"
        intro = f"Add {flag} feature flag"
        if knobs.merges:
            script.append("git checkout -q -b feature/flags")
            commit(intro, {"src/flags.py": flag_file})
            commit("Wire flags into app", {"src/wiring.py": "import flags\n"})
            script.append("git checkout -q main")
            gap()
            commit("Merge branch 'feature/flags'", {}, merge="feature/flags")
        else:
            commit(intro, {"src/flags.py": flag_file})
        commit(
            f"Announce{mention} rollout in README", {"README.md": files["README.md"] + "Rollout: gradual.\n"}
        )
        storage = "Switch storage backend to sqlite"
        for round_ in range(knobs.reintroductions):
            gap()
            if readd:
                commit(f"Remove {flag} definition (cleanup {round_ + 1})", {"src/flags.py": "RETRIES = 3\n"})
            else:  # the flag's line stays, so only the introduction changes its occurrences
                commit(
                    f"Tune retry count (step {2 * round_ + 1})",
                    {"src/flags.py": f"{flag} = True\nRETRIES = {4 + 2 * round_}\n"},
                )
            if round_ == 0:
                commit(storage, {"src/app.py": files["src/app.py"] + "STORAGE = 'sqlite'\n"})
            gap()
            if readd:
                commit(
                    f"Restore {flag} definition (round {round_ + 1})",
                    {"src/flags.py": f"{flag} = False\nRETRIES = 3\n"},
                )
            else:
                commit(
                    f"Tune retry count (step {2 * round_ + 2})",
                    {"src/flags.py": f"{flag} = True\nRETRIES = {5 + 2 * round_}\n"},
                )
        gap()
        bad = f"Lower request timeout to {new_timeout}s"

        def after_bad() -> None:
            for n, feature in enumerate(FEATURES[: max(0, knobs.merges - 1)]):
                script.append(f"git checkout -q -b feature/{feature}")
                commit(
                    f"Add {feature} module", {f"src/{feature}.py": f"def {feature}():\n    return '{n}'\n"}
                )
                script.append("git checkout -q main")
                filler(False)
                commit(f"Merge branch 'feature/{feature}'", {}, merge=f"feature/{feature}")
            gap(allow_settings=False)
            if not releases:
                releases.append("Release v1.1")
                commit(releases[-1], {"CHANGELOG.md": files["CHANGELOG.md"] + "\n## v1.1\n"})

        if "rewrites_history" not in edge_cases:
            after_bad()  # before it: the bad commit is the tip of main
        settings = files["config/settings.ini"].replace(
            f"timeout = {old_timeout}\n", f"timeout = {new_timeout}\n"
        )
        commit(bad, {"config/settings.ini": settings})
        if "rewrites_history" in edge_cases:
            after_bad()
        script.append("git gc -q --prune=now >/dev/null 2>&1 || true")
        tree = dict(files)
        tree["config/settings.ini"] = settings.replace(
            f"timeout = {new_timeout}\n", f"timeout = {old_timeout}\n"
        )
        expected: dict[str, Any] = {"subjects": subjects, "bad": bad, "intro": intro, "tree": tree}
        ops = rng.sample(["branch", "tag", "authors"], knobs.n_ops - 2)
        release = rng.choice(releases)
        branch = f"release-{release.split('v')[1]}"
        if "branch" in ops:
            expected["branch"] = [branch, release]
        if "tag" in ops:
            expected["tag"] = ["pre-sqlite", storage]
        if "authors" in ops:
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            expected["authors"] = ["email,commits", *[f"{e},{n}" for e, n in ranked]]
        return TaskParts(
            instruction=self._instruction(flag, bad, ops, branch, release, storage),
            environment={
                "Dockerfile": STANDARD_DOCKERFILE
                + "RUN bash /app/.setup/make_repo.sh && rm -rf /app/.setup\n",
                "app/.setup/make_repo.sh": "\n".join(script) + "\n",
            },
            tests={
                "test.sh": STANDARD_TEST_SH,
                "test_outputs.py": fail_fast_script(
                    expected, TEST_BODY, imports=("subprocess",), embed="literal"
                ),
            },
            solver=self._solver(flag, bad, ops, branch, release, storage),
        )

    def _solver(
        self, flag: str, bad: str, ops: list[str], branch: str, release: str, storage: str
    ) -> SolverProgram:
        lines = [
            "#!/bin/bash",
            "set -e",
            "cd /app/repo",
            "export GIT_AUTHOR_NAME=Solver GIT_AUTHOR_EMAIL=solver@example.com",
            "export GIT_COMMITTER_NAME=Solver GIT_COMMITTER_EMAIL=solver@example.com",
            "g() { git -c safe.directory='*' \"$@\"; }",
            "hash_of() { g log main --format='%H%x09%s' | awk -F'\\t' -v s=\"$1\" '$2 == s {print $1; exit}'; }",
            "mkdir -p /app/results",
            f"g log main -S '{flag}' --reverse --format=%H | head -n 1 > /app/results/introduced.txt",
        ]
        if "authors" in ops:
            lines.append(
                "g log main --no-merges --format=%ae | sort | uniq -c | sort -k1,1nr -k2,2 "
                '| awk \'BEGIN {print "email,commits"} {print $2 "," $1}\' > /app/results/authors.csv'
            )
        if "branch" in ops:
            lines.append(f'g branch {branch} "$(hash_of "{release}")"')
        if "tag" in ops:
            lines.append(f'g tag -a pre-sqlite -m "Last commit before sqlite" "$(hash_of "{storage}")^"')
        lines += [f'BAD="$(hash_of "{bad}")"', 'g revert --no-edit "$BAD"']
        # SolverProgram runs Python (`heredoc_solve`): the Python program runs the shell script
        # embedded verbatim, so the edits below apply to the shell text
        oracle = (
            'import subprocess\n\nsubprocess.run(["bash", "-c", r"""\n'
            + "\n".join(lines)
            + '\n"""], check=True)\n'
        )
        # each edit touches its own text, so the edits of several variants compose
        edits = {
            "latest_introduction": [(" --reverse --format=%H", " --format=%H")],
            "greps_commit_messages": [(f"g log main -S '{flag}'", f"g log main --grep='{flag}'")],
            "rewrites_history": [
                ('g revert --no-edit "$BAD"', 'g reset -q --hard "$BAD"\ng revert --no-edit "$BAD"')
            ],
        }
        return edited_program(oracle, edits, self.variants)

    def _instruction(
        self, flag: str, bad: str, ops: list[str], branch: str, release: str, storage: str
    ) -> str:
        steps = [
            f"Find the commit that **first** added the string `{flag}` to a file (the flag may have been removed "
            "and added again later; commit messages do not count). Write its full 40-character hash to "
            "`/app/results/introduced.txt`.",
            f"Undo the commit with subject `{bad}` on `main` by adding a new commit that reverts it. Do not "
            "rewrite history: every existing commit must stay on `main`. Leave `main` checked out with a clean "
            "working tree.",
        ]
        if "branch" in ops:
            steps.append(f"Create a branch `{branch}` pointing at the commit with subject `{release}`.")
        if "tag" in ops:
            steps.append(f"Create an **annotated** tag `pre-sqlite` on the parent of the commit `{storage}`.")
        if "authors" in ops:
            steps.append(
                "Write `/app/results/authors.csv` with header `email,commits`: the number of non-merge "
                "commits per author email in the history of `main` as it was given (not counting your "
                "revert), sorted by count descending, then email ascending."
            )
        listing = "\n".join(f"{n}. {s}" for n, s in enumerate(steps, 1))
        return f"""# Repository maintenance

`/app/repo` is a git repository (branch `main`, possibly with merged feature branches). Create
`/app/results/` if needed and do the following. Use your own name and email for new commits.

{listing}
"""


register_family(GitOperationsFamily())
