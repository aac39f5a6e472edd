/**
 * Numbered, forward-only migrations, embedded in the binary (they are imported code, not files read at run time).
 * Migration N brings the schema from user_version N-1 to N. Never edit a migration that has shipped: add one.
 */
import m001 from "./migrations/001-keys-and-ledger";
import m002 from "./migrations/002-releases";
import m003 from "./migrations/003-announcements-heartbeats";
import m004 from "./migrations/004-releases-generation";
import m005 from "./migrations/005-heartbeat-journal";
import m006 from "./migrations/006-announcements-generation";
import m007 from "./migrations/007-stored-responses";
import m008 from "./migrations/008-stored-responses-by-key";
import m009 from "./migrations/009-ledger-estimated";
import m010 from "./migrations/010-asset-ids-never-reused";
import m011 from "./migrations/011-asset-signatures";
import m012 from "./migrations/012-release-rollouts";
import m013 from "./migrations/013-asset-signature-urls";
import m014 from "./migrations/014-upstream-refused-params";
import m015 from "./migrations/015-stored-items-by-position";
import m016 from "./migrations/016-stored-response-totals";
import m017 from "./migrations/017-asset-updater-digests";
import m018 from "./migrations/018-ledger-account";
import m019 from "./migrations/019-stored-response-account";
import m020 from "./migrations/020-stored-responses-one-key-index";
import m021 from "./migrations/021-stored-response-totals-in-code";

export const MIGRATIONS: readonly string[] = [m001, m002, m003, m004, m005, m006, m007, m008, m009, m010, m011, m012, m013, m014, m015, m016, m017, m018, m019, m020, m021];

export const SCHEMA_VERSION = MIGRATIONS.length;
