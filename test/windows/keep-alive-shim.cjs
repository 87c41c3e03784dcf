// Preloaded into ugs under Wine by the Windows lane (test/kit/wine.ts), never part of ugs.
// undici turns TCP keep-alive on while its socket is still connecting; Wine then fails the
// connect (`connect UNKNOWN`), which Windows does not. Here keep-alive waits for the connection.
'use strict';
const { Socket } = require('node:net');

const setKeepAlive = Socket.prototype.setKeepAlive;
Socket.prototype.setKeepAlive = function (...args) {
  if (this.connecting) {
    this.once('connect', () => setKeepAlive.apply(this, args));
    return this;
  }
  return setKeepAlive.apply(this, args);
};
