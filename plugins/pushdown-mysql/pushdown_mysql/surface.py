"""The authorization surface of MySQL/MariaDB, from the server's own schema, and what
pushdown does with each entry (:mod:`pushdown.reconcile.surface`).

Field by field: every grant table (MariaDB 10.11's ``mysql`` schema and MySQL 8's role
tables and settings), every principal form a grant row names (a named account, a role,
``PUBLIC``, the anonymous user, host patterns from ``%`` to a literal address and
``localhost``), every modifier (GRANT OPTION, ADMIN OPTION, column and global privileges,
database patterns, default roles). The rule: a row whose principal can match a managed
account's login is governed (revoked where pushdown's account may and the object is one
it governs) or reported with the exact statement to run; nothing is read and dropped.
The MySQL adversary draws each entry it can create on MariaDB
(``tests/test_mysql_adversary.py``).
"""

from __future__ import annotations

from pushdown.reconcile.surface import SurfaceEntry, Treatment

_T = "plugins/pushdown-mysql/pushdown_mysql/tests/"
ADVERSARY = (
    _T + "test_mysql_adversary.py::test_mysql_is_never_wider_than_the_evaluator_in_a_hostile_environment"
)
_CONVERGES = _T + "test_mysql_sync.py::test_apply_converges_and_every_login_matches_the_evaluator"
_NO_GLOBAL = _T + "test_mysql_sync.py::test_no_global_privileges_and_escaped_database_patterns"
_FENCE = _T + "test_mysql_sync.py::test_fence_leaves_other_accounts_alone_and_strips_extras_from_managed_ones"
_BYPASS = _T + "test_mysql_cli.py::test_access_paths_that_bypass_the_model_are_drift_named_in_verify"
_PUBLIC = _T + "test_mysql_public.py::test_a_public_grant_on_a_governed_table_is_revoked"
_SHADOW = _T + "test_mysql_public.py::test_a_shadowing_account_loses_its_grants_on_governed_databases"
_PURE = _T + "test_mysql_pure.py::test_read_back_rows_normalise_to_facts"
_MYSQL8 = _T + "test_mysql_pure.py::test_mysql8_reads_role_edges_and_the_role_settings"
_N3 = _T + "test_mysql_surface_paths.py::test_n3_role_granted_to_public_is_reported_or_revoked"
_N4 = _T + "test_mysql_surface_paths.py::test_n4_routine_grant_is_reported"
_N4P = _T + "test_mysql_surface_paths.py::test_n4_proxy_grant_is_reported"
_N5 = _T + "test_mysql_surface_paths.py::test_n5_anonymous_database_row_is_revoked_or_reported"
_N5S = _T + "test_mysql_surface_paths.py::test_n5_anonymous_account_at_a_more_specific_host_is_reported"
_PUBLIC_GLOBAL = _T + "test_mysql_surface_paths.py::test_a_global_grant_to_public_is_reported"
_GLOBAL_PRIV = _T + "test_mysql_surface_paths.py::test_a_global_privilege_only_global_priv_holds_is_reported"
_FOLD = _T + "test_mysql_case.py::test_m2_the_setting_is_read_every_sync"
_OWN = _T + "test_mysql_identity.py::test_a_user_mapped_to_pushdowns_own_account_is_refused"
_ORPHAN = _T + "test_mysql_orphan_rows.py::test_a_grant_row_without_an_account_is_revoked_or_reported"
_MIXED = _T + (
    "test_mysql_mixed_revoke.py::test_a_revocable_privilege_beside_one_pushdown_may_not_revoke_is_revoked"
)
_MEMORY = _T + "test_mysql_unflushed.py::test_a_grant_row_deleted_without_flush_is_a_documented_limit"
_PADDED = _T + (
    "test_mysql_padded_names.py::test_an_account_held_under_a_padded_name_is_reported_and_the_narrowing_beside_it_applied"
)
_PADDED_GONE = _T + (
    "test_mysql_padded_names.py::test_a_no_such_grant_answer_for_a_padded_name_counts_the_row_the_tables_give_it"
)
_KINDS = _T + "test_mysql_unseen_kinds.py::test_a_table_grant_reaches_a_versioned_table_or_a_sequence"
_KINDS_SEEN = (
    _T + "test_mysql_unseen_kinds.py::test_the_discovery_summary_counts_versioned_tables_and_sequences"
)

H, G, R, N = Treatment.HANDLED, Treatment.GOVERNED, Treatment.REPORTED, Treatment.NARROWED
U = Treatment.UNSEEN
TABLE, PRINCIPAL, MODIFIER, SETTING = "grant table", "principal form", "modifier", "server setting"
KIND = "object kind"

ENTRIES: tuple[SurfaceEntry, ...] = (
    # -- grant tables ---------------------------------------------------------------
    SurfaceEntry(
        "table.user", TABLE, "mysql.user: global privileges (*.*), is_role", (G, R),
        "Every privilege column is read; pushdown never grants on *.*: a global grant of a login it "
        "reaches is revoked where its account may, else reported with the REVOKE … ON *.* to run.",
        (_NO_GLOBAL, _BYPASS, ADVERSARY),
    ),
    SurfaceEntry(
        "table.global_priv", TABLE, "mysql.global_priv (MariaDB): privileges bitmask, default_role", (G, R),
        "Its access bits are read: those the mysql.user view shows as columns and those it does not "
        "(SET USER … SLAVE MONITOR, unknown bits by number), treated as table.user; its default_role "
        "activates only a membership, which is governed.",
        (_PURE, _GLOBAL_PRIV, ADVERSARY),
    ),
    SurfaceEntry(
        "table.global_grants", TABLE, "mysql.global_grants (MySQL 8): dynamic privileges", R,
        "Read on MySQL 8: each dynamic privilege (SET_USER_ID, ROLE_ADMIN, SYSTEM_USER, …) is a global "
        "grant by its own name, treated as table.user (reported with its REVOKE … ON *.*).",
        (_MYSQL8,),
    ),
    SurfaceEntry(
        "table.db", TABLE, "mysql.db: database-level rows (exact name or pattern)", (H, G, R),
        "Exact-name rows of managed accounts are compiled and written; hand-made ones on governed "
        "databases are revoked; wildcard patterns pushdown may not revoke are reported.",
        (_NO_GLOBAL, _FENCE, ADVERSARY),
    ),
    SurfaceEntry(
        "table.tables_priv", TABLE, "mysql.tables_priv: table-level rows", (H, G),
        "Compiled and written for managed accounts; every other row of a login pushdown reaches, on a "
        "governed database, is revoked.",
        (_CONVERGES, _FENCE, ADVERSARY),
    ),
    SurfaceEntry(
        "table.columns_priv", TABLE, "mysql.columns_priv: column privileges", (G, R),
        "The model decides nothing per column: a column grant of a login pushdown reaches is revoked on "
        "a governed table, else reported.",
        (_BYPASS, _PUBLIC, ADVERSARY),
    ),
    SurfaceEntry(
        "table.procs_priv", TABLE, "mysql.procs_priv: EXECUTE / ALTER ROUTINE / GRANT on a routine", R,
        "Read on every snapshot; a routine runs with its definer's rights, so each grant to a login "
        "pushdown reaches is a finding with the REVOKE … ON PROCEDURE|FUNCTION to run.",
        (_N4, ADVERSARY),
    ),
    SurfaceEntry(
        "table.proxies_priv", TABLE, "mysql.proxies_priv: PROXY ON x TO y", R,
        "Read on full snapshots; a proxy held by a login pushdown reaches, or one on a managed account "
        "or on any user ('') held by anyone but an administrator, is a finding with the REVOKE PROXY.",
        (_N4P, ADVERSARY),
    ),
    SurfaceEntry(
        "table.roles_mapping", TABLE, "mysql.roles_mapping (MariaDB): role memberships", (G, R),
        "Memberships of managed accounts, PUBLIC, the anonymous user and same-name accounts are revoked "
        "where pushdown holds the role WITH ADMIN OPTION, else reported with the REVOKE to run.",
        (_FENCE, _N3, ADVERSARY),
    ),
    SurfaceEntry(
        "table.role_edges", TABLE, "mysql.role_edges (MySQL 8): role memberships, roles with hosts", (G, R),
        "Read instead of roles_mapping on MySQL 8, with the role's host; treated as table.roles_mapping.",
        (_MYSQL8,),
    ),
    SurfaceEntry(
        "table.default_roles", TABLE, "mysql.default_roles (MySQL 8) / SET DEFAULT ROLE", G,
        "A default role activates only a role the account holds: the membership is what pushdown "
        "revokes or reports, so a default role left behind grants nothing.",
        (_FENCE, ADVERSARY),
    ),
    SurfaceEntry(
        "setting.mandatory_roles", SETTING, "mandatory_roles (MySQL 8): roles every account holds", R,
        "Read with the settings on MySQL 8; a non-empty value is a finding with SET PERSIST "
        "mandatory_roles = '' (pushdown changes no server setting).",
        (_MYSQL8,),
    ),
    SurfaceEntry(
        "setting.activate_all_roles_on_login", SETTING,
        "activate_all_roles_on_login (MySQL 8): every granted role active at login", G,
        "Read with the settings; whether a role is active or not, the membership is revoked or "
        "reported, so the setting changes nothing pushdown decides.",
        (_MYSQL8, _FENCE),
    ),
    SurfaceEntry(
        "setting.lower_case_table_names", SETTING, "lower_case_table_names: how names compare", (H, N),
        "Read on every snapshot; where the server folds names, a database or table decides under every "
        "spelling the model names for it (narrower where they differ).",
        (_FOLD, ADVERSARY),
    ),
    SurfaceEntry(
        "server.memory", SETTING,
        "the grants the server enforces (its in-memory copy) vs the grant tables: a row changed by hand "
        "without FLUSH PRIVILEGES", U,
        "pushdown reads the tables: a row deleted without FLUSH stays enforced, unseen, until the next "
        "FLUSH or restart. Comparing with memory (SHOW GRANTS FOR an account) needs SELECT on the whole "
        "mysql database, which pushdown's least-privileged account does not hold (docs/mysql.md, Limits).",
        (_MEMORY,),
    ),
    # -- object kinds ---------------------------------------------------------------
    SurfaceEntry(
        "kind.table_types", KIND,
        "what a table grant reaches: base tables, views, system-versioned tables, sequences", H,
        "Each is a table to the grant tables: the inventory and the discovery summary list every "
        "TABLE_TYPE of these kinds, so a model table of any of them is granted and a database-level "
        "grant is decided over all of them (SYSTEM VIEW and TEMPORARY are left out).",
        (_KINDS, _KINDS_SEEN),
    ),
    # -- principal forms ------------------------------------------------------------
    SurfaceEntry(
        "principal.named", PRINCIPAL, "a named account 'user'@'host'", H,
        "The managed accounts are <account_prefix><user>@<account_host>; their rows are compiled "
        "from the model and written exactly.",
        (_CONVERGES, ADVERSARY),
    ),
    SurfaceEntry(
        "principal.other", PRINCIPAL, "an account outside the fence (another name)", H,
        "Left alone: its rows are not the model's to decide, and no login as a managed account is it.",
        (_FENCE, ADVERSARY),
    ),
    SurfaceEntry(
        "principal.pushdown", PRINCIPAL, "pushdown's own account", H,
        "Never managed, whatever the prefix; a model user mapped to it is refused.",
        (_OWN,),
    ),
    SurfaceEntry(
        "principal.padded", PRINCIPAL, "a user name with trailing spaces ('bob ')", R,
        "The grant tables store it without them and compare names with PAD SPACE; the server's "
        "accounts in memory compare them as written until FLUSH PRIVILEGES. pushdown never names "
        "one (a model user mapped to one gets nothing); a GRANT or REVOKE the server answers 1133 "
        "for (the account is held padded) is reported with the FLUSH to run; a re-read after "
        "'no such grant' counts a row the tables give the account as still held.",
        (_PADDED, _PADDED_GONE),
    ),
    SurfaceEntry(
        "principal.orphan", PRINCIPAL,
        "a grant row whose account does not exist (mysql.db / tables_priv / columns_priv rows by hand)", R,
        "The server matches such a row by user name and host, so it reaches a login; REVOKE cannot remove "
        "it (1141): left out of the facts and reported with the DELETE … ; FLUSH PRIVILEGES to run "
        "(pushdown's account may not edit the grant tables).",
        (_ORPHAN,),
    ),
    SurfaceEntry(
        "principal.role", PRINCIPAL, "a role (MariaDB: no host; MySQL 8: role@host), nested roles", (G, R),
        "Roles are never managed; their privileges reach a login only through a membership (also a "
        "nested one through the outer role), which is revoked or reported.",
        (_FENCE, _N3, ADVERSARY),
    ),
    SurfaceEntry(
        "principal.public", PRINCIPAL, "PUBLIC (MariaDB >= 10.11): every account", (G, R),
        "Its grants and roles reach every managed login: revoked on governed objects where pushdown "
        "may, else reported with the REVOKE … FROM PUBLIC to run.",
        (_PUBLIC, _N3, _PUBLIC_GLOBAL, ADVERSARY),
    ),
    SurfaceEntry(
        "principal.anonymous", PRINCIPAL, "the anonymous user ''@host", (G, R),
        "Its database rows match every user name: revoked on governed databases where pushdown may, "
        "else reported; an anonymous account at a host more specific than a managed account's is a "
        "finding with DROP USER.",
        (_N5, _N5S, ADVERSARY),
    ),
    SurfaceEntry(
        "principal.wildcard_host", PRINCIPAL, "host patterns: '%', '10.0.%', '%.corp'", (H, G, R),
        "The managed host is a setting (default '%'), compared in lower case; an account with a managed "
        "user name at another pattern loses its rows on governed databases and is a finding.",
        (_SHADOW, ADVERSARY),
    ),
    SurfaceEntry(
        "principal.specific_host", PRINCIPAL, "a more specific host: '127.0.0.1', '10.0.0.%'", (G, R),
        "A login from there is that account: a managed user name or the anonymous user at a more "
        "specific host loses its rows on governed databases and is reported (shadows).",
        (_SHADOW, _N5S, ADVERSARY),
    ),
    SurfaceEntry(
        "principal.localhost", PRINCIPAL, "'localhost' (socket and name-resolved logins)", (G, R),
        "Treated as any other host: a managed user name at localhost shadows the managed account, "
        "loses its rows on governed databases and is reported.",
        (_BYPASS, ADVERSARY),
    ),
    # -- modifiers ------------------------------------------------------------------
    SurfaceEntry(
        "modifier.grant_option", MODIFIER, "WITH GRANT OPTION (Grant_priv, 'Grant' in a SET)", (G, R),
        "Read as the privilege GRANT OPTION at its level; never desired: revoked where pushdown may, "
        "reported at global and wildcard levels.",
        (_PURE, ADVERSARY),
    ),
    SurfaceEntry(
        "modifier.admin_option", MODIFIER, "WITH ADMIN OPTION on a role membership", (G, R),
        "The membership is revoked with its option (or reported); pushdown holds a role WITH ADMIN "
        "OPTION only to revoke it.",
        (_FENCE, ADVERSARY),
    ),
    SurfaceEntry(
        "modifier.column", MODIFIER, "column privileges: SELECT (c), INSERT (c), UPDATE (c), …", G,
        "Never desired (the model decides per table): revoked on governed tables (see table.columns_priv).",
        (_BYPASS, _PUBLIC, ADVERSARY),
    ),
    SurfaceEntry(
        "modifier.global_privileges", MODIFIER,
        "global-only privileges: SUPER, FILE, PROCESS, CREATE USER, RELOAD, SHUTDOWN, …", R,
        "Never granted; pushdown's least-privileged account may not revoke them: each on a login "
        "pushdown reaches is reported with the REVOKE … ON *.* to run.",
        (_BYPASS, ADVERSARY),
    ),
    SurfaceEntry(
        "modifier.database_pattern", MODIFIER, "database patterns: `s%`.*, `s_1`.* (wildcards)", (G, R),
        "An exact database is written escaped; a wildcard row of a login pushdown reaches is revoked "
        "where its account may, else reported.",
        (_NO_GLOBAL, _FENCE, ADVERSARY),
    ),
    SurfaceEntry(
        "modifier.ungrantable", MODIFIER,
        "a privilege pushdown's account may not revoke beside ones it may: TRIGGER, EVENT, SHOW VIEW, …",
        (G, R),
        "Decided per privilege: the ones its account may revoke are revoked, the others are left out of "
        "the facts and reported with the REVOKE to run (one REVOKE naming both is refused whole).",
        (_MIXED,),
    ),
    SurfaceEntry(
        "modifier.routine_kind", MODIFIER, "routine kinds: PROCEDURE, FUNCTION, PACKAGE, PACKAGE BODY", R,
        "Each kind is read from procs_priv and named in its finding's REVOKE.",
        (_N4, ADVERSARY),
    ),
)

#: entries the MariaDB adversary cannot draw: MySQL 8's own tables and settings, pushdown's
#: own account (refused before anything is drawn on it)
NOT_DRAWN = frozenset(
    {
        "table.role_edges",  # MySQL 8 only
        "table.global_grants",  # MySQL 8 only
        "setting.mandatory_roles",  # MySQL 8 only
        "setting.activate_all_roles_on_login",  # MySQL 8 only
        "principal.pushdown",  # refused at mapping time (test_mysql_identity), never a hostile state
        "server.memory",  # a limit, not a draw: test_mysql_unflushed shows it
        "kind.table_types",  # objects, not grants: test_mysql_unseen_kinds creates each kind
        "principal.orphan",  # rows written into the grant tables: test_mysql_orphan_rows writes each
        "modifier.ungrantable",  # test_mysql_mixed_revoke grants each mix by hand
        "principal.padded",  # an account made padded, unflushed: test_mysql_padded_names makes each
    }
)
