'use strict';
// Node preload for the Kinesis emulator: `node -r ./loopback.js main.js`.
//
// kinesis-local binds its ports on 0.0.0.0 and offers no setting to change that, which would expose an
// unauthenticated Kinesis on every interface of the machine running the tests. This preload rewrites wildcard
// listen addresses (none given, 0.0.0.0, ::) passed to net.Server#listen, which the HTTP, HTTPS and HTTP/2
// servers all inherit, to 127.0.0.1. Explicit addresses, pipes and handles pass through unchanged.
const net = require('net');

const LOOPBACK = '127.0.0.1';
const WILDCARD_HOSTS = new Set([undefined, null, '', '0.0.0.0', '::', '::0']);
const originalListen = net.Server.prototype.listen;

function isPort(value) {
  return typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value));
}

// Mirrors the argument forms of net.Server#listen: (options[, cb]), (port[, host][, backlog][, cb]),
// ([cb]), (path[, backlog][, cb]) and (handle[, backlog][, cb]).
function toLoopback(args) {
  const [first, ...rest] = args;
  if (first !== null && typeof first === 'object') {
    const isOptions = !('_handle' in first) && !('fd' in first) && first.path === undefined;
    return isOptions && WILDCARD_HOSTS.has(first.host) ? [{ ...first, host: LOOPBACK }, ...rest] : args;
  }
  if (first === undefined || typeof first === 'function') {
    return [0, LOOPBACK, ...args.filter((arg) => arg !== undefined)];
  }
  if (!isPort(first)) {
    return args;
  }
  if (typeof rest[0] === 'string') {
    return WILDCARD_HOSTS.has(rest[0]) ? [first, LOOPBACK, ...rest.slice(1)] : args;
  }
  return [first, LOOPBACK, ...rest];
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  return originalListen.apply(this, toLoopback(args));
};
