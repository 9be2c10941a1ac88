"""Per-article representations: how people, examiners and courts word what an article is about.

The statute's own text is one way to reach an article; lay questions rarely share its words. These
modules collect other texts that are known to be *about* an article — exam questions of 2012–2020
and LQAD-PL questions with the provision that answers them, courts' sentences around a citation of
it in SAOS judgments — into a small per-language store built by the pipeline (``build.py``), and
search it at query time (``search.py``) as extra evidence for the search service's lay fusion.
"""
