"""The fault matrix: acp.nvim in a real Neovim against a misbehaving ACP agent (``make faults``).

Modules: ``rpc`` (msgpack-rpc client), ``driver`` (one Neovim per case), ``probes`` (UI, typed
keys, RPC latency), ``procs`` (agent processes and orphans), ``agent/`` (the misbehaving agent),
``cases/`` (one function per fault), ``verdict`` (the result line), ``__main__`` (the runner).
"""
