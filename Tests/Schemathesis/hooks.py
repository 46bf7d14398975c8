"""Checks of watchdogd's batch ingest for schemathesis (loaded through SCHEMATHESIS_HOOKS).

A batch answers invalid items inside its 202 (`rejected`, with the item's index and error) and
stores the good ones, so schemathesis's own "invalid data is refused" check does not apply to the
two batch operations. This takes its place: every item sent is accounted for exactly once, and every
rejection names a valid index with a code and a message.

(Few generated items are accepted: openapi.yaml cannot say that a time must fall between
2007-01-09 and the server's clock + 24 h, that `app` must be the key's app, or which kinds need
`view` or `lock`, and the generator rarely hits all of them. Storing valid items is what the Swift
tests and the fuzz target check.)
"""
import schemathesis

BATCHES = {"/v1/reports": "reports", "/v1/sessions": "sessions"}


def _batch(case):
    if case.method.upper() != "POST" or case.path not in BATCHES or not isinstance(case.body, dict):
        return None
    items = case.body.get(BATCHES[case.path])
    return items if isinstance(items, list) else None


@schemathesis.check
def every_batch_item_is_accounted_for(ctx, response, case):
    items = _batch(case)
    if items is None or response.status_code != 202:
        return None
    body = response.json()
    rejected = body["rejected"]
    indexes = [entry["index"] for entry in rejected]
    total = body["accepted"] + body["duplicates"] + len(rejected)
    if total != len(items):
        raise AssertionError(f"{len(items)} items sent, {total} accounted for: {body}")
    if len(set(indexes)) != len(indexes) or any(not 0 <= i < len(items) for i in indexes):
        raise AssertionError(f"rejected indexes repeat or fall outside the batch of {len(items)}: {indexes}")
    for entry in rejected:
        error = entry.get("error") or {}
        if not error.get("code") or not error.get("message"):
            raise AssertionError(f"a rejection without a code and a message: {entry}")
    return None
