"""The fuzzer's agent (``python -m fuzz.agent``): a plain ACP agent whose only prompt turn stays open
while it writes the batches the harness sends over a control socket (``FUZZ_SOCKET``)."""
