-- Drives oh-bridge from headless Neovim through vim.lsp.rpc: initialize,
-- bridge/info, shutdown, exit. Run:
--   OH_BRIDGE=/path/to/oh-bridge OH_WORKSPACE=/dir nvim --headless -u NONE -c 'luafile test/nvim/lifecycle.lua'
-- Prints one "ok"/"FAIL" line per check and "N passed, N failed"; quits with
-- a non-zero status on failure.
local bin, workspace = os.getenv('OH_BRIDGE'), os.getenv('OH_WORKSPACE')
local passed, failed, exit_code = 0, 0, nil

local function report(ok, name, detail)
  if ok then
    passed = passed + 1
    io.stdout:write('ok   ' .. name .. '\n')
  else
    failed = failed + 1
    io.stdout:write('FAIL ' .. name .. ': ' .. tostring(detail) .. '\n')
  end
end

local dispatchers = {
  on_exit = function(code, _) exit_code = code end,
}
local args = { '--stdio', '--workspace', workspace }
local client
-- vim.lsp.rpc.start took (cmd, cmd_args, dispatchers) before Neovim 0.10
-- and ({cmd, args...}, dispatchers) since.
if debug.getinfo(vim.lsp.rpc.start, 'u').nparams >= 4 then
  client = vim.lsp.rpc.start(bin, args, dispatchers)
else
  client = vim.lsp.rpc.start(vim.list_extend({ bin }, args), dispatchers)
end

-- request sends a request and waits for its answer.
local function request(method, params)
  local done, err, result = false, nil, nil
  client.request(method, params, function(e, r) done, err, result = true, e, r end)
  vim.wait(5000, function() return done end, 5)
  if not done then return nil, 'timed out' end
  return result, err
end

local res, err = request('initialize', {
  processId = vim.fn.getpid(),
  clientInfo = { name = 'neovim' },
  rootUri = vim.uri_from_fname(workspace),
  -- Lua encodes an empty table as []: the bridge reads it as {}.
  capabilities = {},
})
report(err == nil and res and res.serverInfo and res.serverInfo.name == 'oh-bridge',
  'initialize', vim.inspect(err or res))
client.notify('initialized', {})

res, err = request('bridge/info', vim.empty_dict())
report(err == nil and res and res.roots and res.roots[1] == workspace and res.pid > 0,
  'bridge/info', vim.inspect(err or res))

res, err = request('no/such', vim.empty_dict())
report(err ~= nil and err.code == -32601, 'unknown method answers -32601', vim.inspect(err or res))

res, err = request('shutdown', nil)
report(err == nil, 'shutdown', vim.inspect(err))

client.notify('exit', nil)
vim.wait(5000, function() return exit_code ~= nil end, 5)
report(exit_code == 0, 'exit code 0 after shutdown', tostring(exit_code))

io.stdout:write(string.format('%d passed, %d failed\n', passed, failed))
if failed > 0 then vim.cmd('cquit 1') else vim.cmd('qall!') end
