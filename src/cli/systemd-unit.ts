/** The systemd unit for Gantry (pure, so the README, `gantry service install` and tests share one text). */
export interface UnitOptions {
  binary: string;
  user: string;
  dataDir: string;
  envFile: string;
}

export function systemdUnit(o: UnitOptions): string {
  return `[Unit]
Description=Gantry model gateway and client update site
Documentation=gantry --help
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=${o.user}
Group=${o.user}
# Settings: GANTRY_UPSTREAM_URL, GANTRY_UPSTREAM_KEY, GANTRY_ADMIN_TOKEN, GANTRY_TLS_CERT, ... (one per line, KEY=value)
EnvironmentFile=-${o.envFile}
Environment=GANTRY_DATA_DIR=${o.dataDir}
# Bun runs at most 256 outgoing requests at once unless told otherwise at start: one per open stream here.
Environment=BUN_CONFIG_MAX_HTTP_REQUESTS=4096
ExecStart=${o.binary} serve
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
ReadWritePaths=${o.dataDir}
StateDirectory=${o.dataDir.startsWith("/var/lib/") ? o.dataDir.slice("/var/lib/".length) : "gantry"}
UMask=0077

[Install]
WantedBy=multi-user.target
`;
}
