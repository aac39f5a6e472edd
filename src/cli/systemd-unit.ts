/**
 * The systemd unit for Gantry (pure, so the README, `gantry service install` and tests share one text).
 * It passes `systemd-analyze verify` without a warning (tests/integration/systemd-unit.test.ts runs it).
 */
export interface UnitOptions {
  binary: string;
  user: string;
  dataDir: string;
  envFile: string;
}

/**
 * A path as one word of a unit setting: `%` doubled (systemd would read it as a specifier), and in double
 * quotes with C-style escapes when it holds a space, a quote or a backslash (settings split words on spaces).
 */
export function unitWord(value: string): string {
  const v = value.replace(/%/g, "%%");
  return /[\s"'\\]/.test(v) ? `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"` : v;
}

export function systemdUnit(o: UnitOptions): string {
  const stateDirectory = o.dataDir.startsWith("/var/lib/") ? o.dataDir.slice("/var/lib/".length) : "gantry";
  return `[Unit]
Description=Gantry model gateway and client update site
# Reference: 'gantry serve --help' lists every setting. (Documentation= takes only URLs; there is none to give.)
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${o.user}
Group=${o.user}
# Settings: GANTRY_UPSTREAM_URL, GANTRY_UPSTREAM_KEY, GANTRY_ADMIN_TOKEN, GANTRY_TLS_CERT, ... (one per line, KEY=value)
EnvironmentFile=-${o.envFile.replace(/%/g, "%%")}
Environment=${unitWord(`GANTRY_DATA_DIR=${o.dataDir}`)}
ExecStart=${unitWord(o.binary)} serve
ExecReload=/bin/kill -HUP $MAINPID
KillSignal=SIGTERM
TimeoutStopSec=45
Restart=on-failure
RestartSec=2s
LimitNOFILE=65536

# Hardening
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true
PrivateDevices=true
ProtectKernelTunables=true
ProtectKernelModules=true
ProtectKernelLogs=true
ProtectControlGroups=true
ProtectClock=true
ProtectHostname=true
RestrictSUIDSGID=true
RestrictRealtime=true
RestrictNamespaces=true
LockPersonality=true
MemoryDenyWriteExecute=false
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
AmbientCapabilities=CAP_NET_BIND_SERVICE
ReadWritePaths=${unitWord(o.dataDir)}
StateDirectory=${unitWord(stateDirectory)}
UMask=0077

[Install]
WantedBy=multi-user.target
`;
}
