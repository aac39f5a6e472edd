/**
 * A small stand-in for Electron's `electron` module, enough for the real electron-updater to run under plain Node
 * (tests/support/electron-updater-client.cjs; found through NODE_PATH): `app` (version, name, paths, ready), and
 * `net.request` handed to Node's http.request with Electron's manual redirects (a `redirect` event instead of a
 * response), `session.fromPartition`, `autoUpdater` and `Notification` as inert objects.
 */
"use strict";
const { EventEmitter } = require("node:events");
const http = require("node:http");
const https = require("node:https");

const app = Object.assign(new EventEmitter(), {
  isPackaged: true,
  getVersion: () => process.env.STAND_IN_APP_VERSION,
  getName: () => "StandInApp",
  getAppPath: () => process.env.STAND_IN_USER_DATA,
  getPath: (name) => (name === "userData" ? process.env.STAND_IN_USER_DATA : require("node:os").tmpdir()),
  whenReady: () => Promise.resolve(),
  isReady: () => true,
  quit: () => {},
  relaunch: () => {},
});

function request(options) {
  const { session: _session, redirect, ...rest } = options;
  const out = new EventEmitter();
  const lib = rest.protocol === "https:" ? https : http;
  const req = lib.request(rest, (res) => {
    const location = res.headers.location;
    if (redirect === "manual" && res.statusCode >= 300 && res.statusCode < 400 && location) {
      res.resume();
      const base = `${rest.protocol || "http:"}//${rest.hostname || rest.host}${rest.port ? `:${rest.port}` : ""}${rest.path || "/"}`;
      out.emit("redirect", res.statusCode, rest.method || "GET", new URL(location, base).href);
      return;
    }
    out.emit("response", res);
  });
  req.on("error", (err) => out.emit("error", err));
  Object.assign(out, {
    abort: () => req.destroy(),
    end: (...args) => req.end(...args),
    write: (...args) => req.write(...args),
    setHeader: (k, v) => req.setHeader(k, v),
    setTimeout: (ms, cb) => req.setTimeout(ms, cb),
    followRedirect: () => {},
  });
  return out;
}

module.exports = {
  app,
  net: { request },
  session: { fromPartition: () => ({}) },
  autoUpdater: new EventEmitter(),
  Notification: class { show() {} },
};
