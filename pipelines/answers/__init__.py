"""Answering exam questions over the corpus and scoring the answers.

``types`` (the shared question/result records), ``scoring`` (answer/context/joint scores of the
gAIus paper, keyword success/progress rates of LegalAgentBench), ``llm_client`` (an
OpenAI-compatible chat-completions client over httpx), ``extraction`` (model reply → option and
cited unit ids) and ``gaius_agent`` (the gAIus tool-calling flow).
"""
