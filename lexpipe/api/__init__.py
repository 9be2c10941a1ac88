"""The HTTP API (``lexpipe serve``): search, point-in-time reads, bulk export, the change feed and
webhook subscriptions in one FastAPI app.

    app.py     create_app: the services, the error handlers, one include_router per router
    deps.py    the services a request uses (app.state; opened from the settings when not given)
    search.py  GET/POST /search, /health
    acts.py    /acts, /acts/{act}, /acts/{act}/versions[/{v}], /acts/{act}/toc, /acts/{act}/diff
    units.py   /units/{unit_id}?as_of=, /units/{unit_id}/history
    export.py  /acts/{act}/versions/{v}/download?format=parquet|jsonl (ETag, Range)
    changes.py /changes (JSON, cursor paging), /changes.atom, /changes/{act}/{version}
    subscriptions.py  /subscriptions…, /events/{id}… (webhooks; API key, owner-scoped)
    security.py  API keys (sha256 digests), rate limits, body limit, webhook URL guard (LEXPIPE_API_*)
    models.py  response models of the read endpoints
"""

from lexpipe.api.app import create_app
from lexpipe.api.search import HitOut, SearchBody, SearchOut, unknown_act

__all__ = ["HitOut", "SearchBody", "SearchOut", "create_app", "unknown_act"]
