"""Each refusal carries the HTTP status every surface answers it with (``InvalidRequest.status``),
so the API and the search page never decide 404 / 422 / 503 from the message's words."""

from __future__ import annotations

import pytest

from pipelines.retrieval.elasticsearch.errors import ElasticsearchEncoderMismatch, ElasticsearchSearchError
from pipelines.retrieval.interface import EncoderMismatch, SearchError
from pipelines.retrieval.service import InvalidRequest, SearchService


@pytest.mark.parametrize("error,status", [
    (SearchError("pl:kc has no indexed version on or before 1990-01-01"), 404),
    (ElasticsearchSearchError("unknown act 'pl:kk'"), 404),
    (EncoderMismatch("the pl statute index was indexed with the a encoder, but …"), 503),
    (ElasticsearchEncoderMismatch("lexpipe-pl (lexpipe-pl-1) was indexed with the a encoder, but …"), 503),
])
def test_a_backend_refusal_keeps_its_kind(error, status):
    refusal = InvalidRequest.from_search_error(error)
    assert refusal.status == status and str(refusal) == str(error)


def test_a_malformed_request_is_422_by_default():
    with pytest.raises(InvalidRequest) as caught:
        SearchService(backend=None).search("umowa", k=0)
    assert caught.value.status == 422 and "k must be between" in str(caught.value)


def test_a_language_without_statutes_is_404():
    class OnlyCases:
        def acts(self):
            return ["pl:cases"]

    with pytest.raises(InvalidRequest) as caught:
        SearchService(OnlyCases()).search("umowa")
    assert caught.value.status == 404 and "no pl: statute is indexed" in str(caught.value)
