" Test init: the plugin on the runtimepath, remote plugins enabled (never --clean / -u NONE).
let s:root = fnamemodify(expand('<sfile>:p'), ':h:h')
execute 'set runtimepath^=' . fnameescape(s:root)
let g:python3_host_prog = $ACP_NVIM_TEST_PYTHON
let g:acp_nvim_python = $ACP_NVIM_TEST_PYTHON
let g:loaded_python_provider = 0
let g:loaded_ruby_provider = 0
let g:loaded_node_provider = 0
let g:loaded_perl_provider = 0
set noswapfile shortmess+=I
filetype plugin on
