"""The verdict of the hosts test (scripts/ci/python_bindings.sh): for one
host, what the official client got without the adapter, with it (over stdio
and over Streamable HTTP), and what the mcp-tool-errors command or a Rust
server with the layer gives for the same failure; printed as a table, exit 1
on a difference.

    compare.py server HOST DIR CASES [--by-rust CASE...]
    compare.py gateway HOST DIR CASES --failing CASE... -- COMMAND [ARGS...]

DIR holds client.py's outputs: `HOST-without.json`, `HOST-with-stdio.json`,
`HOST-with-http.json`, and for a server `HOST-command.json` (the command in
front of the server without the adapter) and `rust.json` (the Rust example
server with the layer), and `HOST-with-*.marks` (what the server wrote when a
call was cancelled).

A server: every case with the adapter, over either transport, is the
command's outcome, except the cases of --by-rust (an exception the host hands
the adapter, which the command only sees as the host wrote it), which are the
Rust server's for the same tool; a hang is unanswered without the adapter,
and with it the tool's task was cancelled once per transport.

A gateway (its hook sees results only): each --failing case with the adapter
is its outcome without, each text as the command writes it for that tool and
that text (verdict.py); every other case is the same both ways.
"""

import copy
import json
import os
import sys

from verdict import conclude, written_by_command

TRANSPORTS = ("stdio", "http")


def load(directory, name):
    with open(os.path.join(directory, name)) as file:
        return json.load(file)


def shown(outcome):
    """An outcome in a table cell: its texts, or the error, or the wait."""
    if outcome is None:
        return ""
    if "result" in outcome:
        texts = [item.get("text") for item in outcome["result"].get("content", []) if item.get("type") == "text"]
        flag = " (isError)" if outcome["result"].get("isError") else ""
        return json.dumps(texts[0] if len(texts) == 1 else texts, ensure_ascii=False) + flag
    if "error" in outcome:
        return f"JSON-RPC error {outcome['error'].get('code')}: {json.dumps(outcome['error'].get('message'))}"
    return f"no answer within {outcome['unanswered']} s"


def cell(text):
    return "`" + text.replace("|", "\\|").replace("`", "'") + "`" if text else ""


def server_expectations(host, directory, cases, by_rust, problems):
    without = load(directory, f"{host}-without.json")
    command = load(directory, f"{host}-command.json")
    rust = load(directory, "rust.json")
    expected = {}
    for case, (tool, *_) in cases.items():
        expected[case] = rust.get(tool) if case in by_rust else command.get(case)
        if expected[case] is None:
            problems.append(f"{case}: no expected outcome")
    for case, (tool, *_) in cases.items():
        if tool in ("sleep", "block") and "unanswered" not in without.get(case, {}):
            problems.append(f"{case}: without the adapter, expected no answer, got {without.get(case)}")
    for transport in TRANSPORTS:
        marks_path = os.path.join(directory, f"{host}-with-{transport}.marks")
        marks = open(marks_path).read().split("\n") if os.path.exists(marks_path) else []
        if marks.count("sleep cancelled") != 1:
            problems.append(f"hang: with the adapter over {transport}, the tool's task was not cancelled once: {marks}")
    return without, {"command": command, "rust": rust}, expected


def gateway_expectations(host, directory, cases, failing, command, problems):
    without = load(directory, f"{host}-without.json")
    pairs = []
    for case in failing:
        outcome = without.get(case, {})
        if not outcome.get("result", {}).get("isError"):
            problems.append(f"{case}: expected an isError result without the adapter, got {outcome}")
            continue
        tool = cases[case][0]
        pairs.extend((tool, item["text"]) for item in outcome["result"]["content"] if item.get("type") == "text")
    texts = iter(written_by_command(command, pairs))
    expected = {}
    for case in cases:
        expected[case] = copy.deepcopy(without.get(case))
        if case in failing and expected[case] and expected[case].get("result", {}).get("isError"):
            for item in expected[case]["result"]["content"]:
                if item.get("type") == "text":
                    item["text"] = next(texts)
    return without, {}, expected


def main():
    mode, host, directory, cases = sys.argv[1:5]
    cases = json.loads(cases)
    rest = sys.argv[5:]
    command = rest[rest.index("--") + 1 :] if "--" in rest else []
    options = rest[: rest.index("--")] if "--" in rest else rest
    listed = {"--by-rust": [], "--failing": []}
    current = None
    for word in options:
        if word in listed:
            current = listed[word]
        else:
            current.append(word)
    problems = []
    if mode == "server":
        without, oracles, expected = server_expectations(host, directory, cases, listed["--by-rust"], problems)
        transports = TRANSPORTS
    else:
        without, oracles, expected = gateway_expectations(host, directory, cases, listed["--failing"], command, problems)
        transports = ("http",)
    withs = {transport: load(directory, f"{host}-with-{transport}.json") for transport in transports}

    for case in cases:
        for transport, outcomes in withs.items():
            if outcomes.get(case) != expected[case]:
                problems.append(
                    f"{case}: with the adapter over {transport} {json.dumps(outcomes.get(case))}, "
                    f"expected {json.dumps(expected[case])}"
                )

    oracle_name = "the layer's bytes (the command; the Rust server where marked R)" if mode == "server" else "the command's bytes"
    print(f"\n{host}\n\n| case | tool | without the adapter | with it | {oracle_name} |\n|---|---|---|---|---|")
    for case, (tool, *_) in cases.items():
        mark = " (R)" if case in listed["--by-rust"] else ""
        with_shown = shown(withs[transports[0]].get(case))
        print(
            f"| {case} | `{tool}` | {cell(shown(without.get(case)))} | {cell(with_shown)} | {cell(shown(expected[case]))}{mark} |"
        )
    print()
    conclude(problems, cases, f"{host}: ")


if __name__ == "__main__":
    main()
