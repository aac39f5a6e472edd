/**
 * Sample announcements for `gantry demo` (about the versions demo-seed-releases.ts publishes: 1.1.0, and 1.2.0
 * as the latest), and the curl lines that show them, a heartbeat and the statistics.
 * Demo items carry a dismissKey starting with `demo-`, so running the demo again on the same data dir replaces
 * them instead of piling up copies.
 */
import type { AppDeps } from "../deps";
import type { AnnouncementInput } from "../site/announcements/rules/announcement-input";

const DAY_MS = 86_400_000;

export async function seedDemoEngagement(deps: AppDeps): Promise<(base: string) => string> {
  const service = deps.engagement.announcements;
  for (const a of await service.list()) if (a.dismissKey.startsWith("demo-")) await service.delete(a.id);

  const now = deps.now();
  const inDays = (n: number) => new Date(now + n * DAY_MS).toISOString();
  const samples: AnnouncementInput[] = [
    {
      title: "Scheduled maintenance",
      body: "The sync service is down for maintenance on Saturday 02:00-03:00 UTC.",
      targetSurface: "all",
      level: "warning",
      expiresAt: inDays(7),
      dismissKey: "demo-maintenance-1",
      locales: { "zh-CN": { title: "计划维护", body: "同步服务将于周六 02:00-03:00 (UTC) 维护。" } },
    },
    {
      title: "Version 1.2.0 is here",
      body: "Faster start-up, a new settings page and fixes. Update from the menu or download it from the site.",
      targetSurface: "home",
      level: "info",
      ctaText: "Download",
      ctaUrl: "https://example.com/download",
      dismissKey: "demo-release-1.2.0",
      locales: { "zh-CN": { title: "1.2.0 版已发布", body: "启动更快，新的设置页面和多项修复。可在菜单中更新，或从网站下载。", ctaText: "下载" } },
    },
    {
      title: "Please update: security fix",
      body: "Versions 1.0.0 to 1.1.0 have a known issue that 1.2.0 fixes. Please update now.",
      targetSurface: "client",
      level: "critical",
      minVersion: "1.0.0",
      maxVersion: "1.1.0",
      ctaText: "Update now",
      ctaUrl: "https://example.com/download",
      dismissKey: "demo-security-1.2.0",
    },
    {
      title: "[test] New onboarding flow",
      body: "The onboarding planned for 1.3.0. Only test and staging builds see this.",
      targetSurface: "client",
      testOnly: true,
      expiresAt: inDays(30),
      dismissKey: "demo-onboarding-test",
    },
  ];
  for (const input of samples) await service.create(input);

  return (base: string) =>
    [
      "Announcements (a 1.1.0 build is asked to update; an up-to-date 1.2.0 build in Chinese; the home page; a staging build sees the test item):",
      `  curl -s '${base}/api/v1/announcements?surface=client&app=demo&version=1.1.0'`,
      `  curl -s '${base}/api/v1/announcements?surface=client&app=demo&version=1.2.0&locale=zh-CN'`,
      `  curl -s '${base}/api/v1/announcements?surface=home'`,
      `  curl -s '${base}/api/v1/announcements?surface=client&app=demo-staging'`,
      "Heartbeat (send one every 60 s; online = reported within 5 minutes):",
      `  curl -s -X POST ${base}/api/v1/client/heartbeat -H 'Content-Type: application/json' -H 'X-App-Client-ID: 0d6c9b1e-demo' \\`,
      `    -d '{"app":"demo","version":"1.2.0","platform":"windows","arch":"x64","runtime":"electron","locale":"zh-CN"}'`,
      "Statistics (admin token):",
      `  curl -s ${base}/admin/api/stats/clients -H "Authorization: Bearer $GANTRY_ADMIN_TOKEN"`,
      `  curl -s '${base}/admin/api/stats/clients/series?minutes=60' -H "Authorization: Bearer $GANTRY_ADMIN_TOKEN"`,
    ].join("\n");
}
