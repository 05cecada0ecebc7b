#!/usr/bin/python3
"""Reads a JUnit XML file the way CI tools do (junitparser) and prints what they would show:
one line per suite (name, tests, failures, errors) and one per case (result, name, message)."""
import sys

from junitparser import Error, Failure, JUnitXml, Skipped

xml = JUnitXml.fromfile(sys.argv[1])
suites = [xml] if xml._tag == "testsuite" else list(xml)
for suite in suites:
    print(f"suite|{suite.name}|{suite.tests}|{suite.failures}|{suite.errors}|{suite.time}")
    for case in suite:
        results = case.result
        kind = "pass"
        message = ""
        for r in results:
            if isinstance(r, Failure):
                kind, message = "failure", r.message
            elif isinstance(r, Error):
                kind, message = "error", r.message
            elif isinstance(r, Skipped):
                kind, message = "skipped", r.message
        message = (message or "").replace("\n", "\\n")
        print(f"case|{kind}|{case.name}|{message}")
