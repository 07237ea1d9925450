"""Ranger's authorization surface: every field of a policy, and every setting of a service
and its plugin, that can change an access decision, with what pushdown does with each
(:mod:`pushdown.reconcile.surface`). The adversary
(``pushdown_ranger/tests/test_ranger_adversary.py``) draws hostile state by these keys."""

from __future__ import annotations

from pushdown.reconcile.surface import SurfaceEntry, Treatment

H, G, R, N = Treatment.HANDLED, Treatment.GOVERNED, Treatment.REPORTED, Treatment.NARROWED
T = "plugins/pushdown-ranger/pushdown_ranger/tests/"
PATHS = T + "test_ranger_surface_paths.py::"
REVIEW = T + "test_ranger_review.py::"
HOSTILE = T + "test_ranger_hostile_state.py::"
SHAPES = T + "test_ranger_shapes.py::"
OPEN = T + "test_ranger_fail_open.py::"
BACKEND = T + "test_ranger_backend.py::"
READ = T + "test_ranger_readback.py::"
NULL = T + "test_ranger_null_narrow.py::"
REVIEW5 = T + "test_ranger_review5.py::"
REVIEW7 = T + "test_ranger_review7.py::"
CREATE = T + "test_ranger_create_table.py::"
SHARED = T + "test_ranger_shared_catalogs.py::"
CYCLE = T + "test_ranger_join_cycle.py::"
CYCLE_HOSTILE = T + "test_ranger_join_cycle_hostile.py::"
REUSE = "plugins/pushdown-lab/pushdown_lab/tests/test_ranger_standin_matcher_reuse.py::"
ADVERSARY = T + "test_ranger_adversary.py::test_ranger_is_never_wider_than_the_evaluator_in_a_hostile_world"

POLICY = "policy field"
RESOURCE = "resource"
PRINCIPAL = "principal in an item"
ROLE = "role"
SERVICE = "service and plugin"
LOCATION = "fileset location form"

ENTRIES: tuple[SurfaceEntry, ...] = (
    # -- policy fields ---------------------------------------------------------------------------
    SurfaceEntry(
        "policy.priority",
        POLICY,
        "policyPriority (override)",
        (R, N),
        "an override-priority policy beats every normal deny item on whatever it matches: in Hive on "
        "pushdown's resource set or any matching shape the database is compiled without deny items, "
        "in Kafka and HDFS on any matching shape the service is; the policy is reported",
        (
            HOSTILE + "test_r5_a_hand_made_policy_that_voids_deny_items_is_never_relied_on",
            REVIEW + "test_override_policy_on_a_wider_resource_set_voids_the_deny",
            PATHS + "test_n1_override_priority_policy_on_wider_kafka_or_hdfs_resource_is_reported",
        ),
    ),
    SurfaceEntry(
        "policy.deny_all_else",
        POLICY,
        "isDenyAllElse",
        H,
        "only denies (whoever its items do not allow): never wider; pushdown does not set it (see "
        "plugin.hadoop_fallback for what a missing decision means on HDFS)",
        (PATHS + "test_fields_that_only_narrow_or_only_audit_never_widen",),
    ),
    SurfaceEntry(
        "policy.allow_items",
        POLICY,
        "policyItems (allow items)",
        (H, G, R),
        "pushdown writes plain allow items naming its roles and replaces them each sync (edits to them "
        "are put right); a hand-made allow item reaching a model user or group is reported",
        (
            BACKEND + "test_a_hand_made_item_for_a_model_user_is_a_finding_and_left_alone",
            REVIEW + "test_pushdowns_items_edited_by_hand",
            HOSTILE + "test_pushdowns_policy_widened_by_hand_is_put_right_by_a_scoped_sync",
        ),
    ),
    SurfaceEntry(
        "policy.deny_items",
        POLICY,
        "denyPolicyItems (deny items)",
        (H, G),
        "pushdown writes a model DENY as deny items (also for a user holding only the DENY) and puts "
        "its own right when edited; hand-made ones only deny",
        (
            SHAPES + "test_a_deny_on_one_table_is_a_deny_item_on_that_table",
            REVIEW + "test_pushdowns_own_deny_policy_edited_by_hand",
            PATHS + "test_n9_a_user_holding_only_a_deny_on_a_table_gets_the_deny_written",
        ),
    ),
    SurfaceEntry(
        "policy.allow_exceptions",
        POLICY,
        "allowExceptions",
        R,
        "they can only cut pushdown's allow items (narrower): reported",
        (HOSTILE + "test_c1_allow_exceptions_cutting_pushdowns_allows_are_a_finding",),
    ),
    SurfaceEntry(
        "policy.deny_exceptions",
        POLICY,
        "denyExceptions",
        (N, R),
        "a policy with deny exceptions holding pushdown's deny items voids them: that database (topic or "
        "fileset service) is compiled without deny items, per-table allow items instead; reported",
        (
            HOSTILE + "test_r5_a_hand_made_policy_that_voids_deny_items_is_never_relied_on",
            HOSTILE + "test_r5_deny_exceptions_added_after_the_merge_are_read_by_a_scoped_sync",
        ),
    ),
    SurfaceEntry(
        "item.conditions",
        POLICY,
        "policy item conditions (on an item naming pushdown's role, or a model principal)",
        (G, R),
        "an allow item with conditions naming pushdown's role is read as held but never as compiled: "
        "the next sync of its policy takes pushdown's roles out of it (only narrower) and writes its "
        "plain item again where the model wants it; a deny item with conditions is kept whole (taking "
        "a role out would widen), pushdown writes its plain deny item again and reports the other; "
        "one reaching a model principal is reported",
        (
            REVIEW + "test_pushdowns_deny_item_given_a_condition_by_hand",
            READ + "test_our_roles_leave_a_modified_allow_item_and_a_modified_deny_item_stays_whole",
        ),
    ),
    SurfaceEntry(
        "policy.conditions",
        POLICY,
        "policy conditions",
        (N, R),
        "deny items in a policy with conditions hold only some of the time: never relied on (compiled "
        "without deny items there); reported",
        (PATHS + "test_a_policy_holding_deny_items_only_some_of_the_time_is_never_relied_on",),
    ),
    SurfaceEntry(
        "policy.validity",
        POLICY,
        "validitySchedules",
        (N, R),
        "deny items in a policy with a validity schedule hold only some of the time: never relied on; "
        "reported",
        (PATHS + "test_a_policy_holding_deny_items_only_some_of_the_time_is_never_relied_on",),
    ),
    SurfaceEntry(
        "policy.enabled",
        POLICY,
        "isEnabled (policy)",
        (N, R),
        "a disabled policy holding pushdown's deny items voids them (compiled without); one holding its "
        "items is reported; pushdown writes its own enabled",
        (
            BACKEND + "test_a_policy_disabled_by_hand_or_an_exception_naming_a_pushdown_role_is_a_finding",
            PATHS + "test_a_policy_holding_deny_items_only_some_of_the_time_is_never_relied_on",
        ),
    ),
    SurfaceEntry(
        "policy.audit",
        POLICY,
        "isAuditEnabled",
        (H, R),
        "harmless: it decides what is logged, never an access; pushdown writes it on and leaves a change, "
        "but turns it on in a policy that taking pushdown's items out leaves with no allow or deny item "
        "(Ranger refuses one with neither, error 3008: the narrowing is never held back), reported",
        (
            PATHS + "test_fields_that_only_narrow_or_only_audit_never_widen",
            REVIEW + "test_pushdowns_roles_leave_a_hand_made_policy_with_audit_off",
            READ + "test_a_policy_left_with_no_item_is_audited",
        ),
    ),
    SurfaceEntry(
        "policy.refused_items",
        POLICY,
        "items Ranger's validator now refuses, stored before (isAllowed false 3023, no access 3002, "
        "nobody or blank names 3020/3053-3055)",
        (H, R),
        "carried as Ranger accepts them with the same decisions when pushdown rewrites the policy: an "
        "access not allowed, an item then granting nothing, a blank name, an item naming nobody dropped; "
        "a principal named null taken out only where that narrows (else kept: the write is refused, and "
        "the narrowing goes into an override-priority deny policy labelled by pushdown beside it, "
        "removed once the policy is writable, gone, or the access allowed again; narrower where another "
        "policy allows the same, reported; beside a policy with override priority itself, or where "
        "another policy holds its signature (3010), it goes on a "
        "spare form of the resources, another signature for the same resources or more, reported; the "
        "model's deny it holds is named in its options and read as held); deny items under "
        "isDenyAllElse (3049) become allow "
        "exceptions (the policy denies them all the same); a repeated access type whose first access is "
        "not allowed is dropped where it implies others (never wider); reported: the narrowing is never "
        "held back",
        (
            REVIEW + "test_items_ranger_now_refuses_never_hold_back_the_narrowing",
            READ + "test_items_ranger_refuses_are_carried_with_the_same_decisions",
            NULL + "test_a_null_deny_never_holds_back_the_narrowing",
            NULL + "test_the_narrowing_policy_goes_once_the_policy_is_writable_or_gone",
            NULL + "test_a_refused_narrowing_policy_leaves_nothing_wider",
            NULL + "test_rangers_own_validator_accepts_the_narrowing_policy",
            NULL + "test_the_narrowing_policy_is_removed_only_with_the_widening_writes",
            NULL + "test_an_override_policy_is_narrowed_on_the_spare_form_of_its_resources",
            NULL + "test_the_models_deny_in_the_narrowing_policy_is_read_as_held",
            REVIEW5 + "test_an_unwritable_policy_with_override_priority_is_still_narrowed",
            REVIEW5 + "test_a_deny_beside_the_unwritable_policys_allow_settles",
            REVIEW5 + "test_a_near_miss_narrowing_policy_never_holds_back_the_narrowing",
            REVIEW5 + "test_a_hand_made_override_policy_on_the_narrowings_resources_never_holds_it_back",
            NULL + "test_a_narrowing_policy_on_a_later_spare_form_is_read_as_the_one_it_narrows",
            NULL + "test_the_narrowed_policys_id_only_breaks_a_tie_among_the_policies_covered",
            REVIEW7 + "test_a_second_unwritable_policy_on_the_spare_form_never_takes_the_narrowing",
            REVIEW7 + "test_a_forged_narrows_option_never_takes_the_narrowing",
            NULL + "test_a_narrowing_policy_put_back_to_override_on_a_held_signature_goes_on_a_spare_form",
            CYCLE + "test_a_join_cycle_through_a_policy_ranger_refuses_to_rewrite_is_never_wider",
        ),
    ),
    SurfaceEntry(
        "policy.name",
        POLICY,
        "policy name (unique per service, error 3006)",
        H,
        "pushdown's names end in a digest of the service and resource set (unambiguous: a database named "
        "`d,table=y` gets its own); a name taken by hand is written under another, unpredictable one; a "
        "deny write refused anyway withdraws the allow items it protects",
        (
            PATHS + "test_n11_a_refused_deny_write_withdraws_the_allow_it_protects",
            PATHS + "test_n11_a_hand_made_policy_taking_pushdowns_deny_policy_name_never_holds_back_the_deny",
            PATHS + "test_n11_a_database_whose_policy_name_equals_another_resource_sets_gets_its_own",
            BACKEND + "test_a_policy_name_taken_by_hand_is_written_under_another_name",
        ),
    ),
    SurfaceEntry(
        "policy.labels",
        POLICY,
        "policyLabels",
        H,
        "decide nothing; pushdown's label marks the policies it may delete once empty, a hand-made policy "
        "it merged into is kept; with `<label>-narrowing` too, a policy is read as a narrowing policy only "
        "when it holds nothing but plain deny items naming pushdown's roles: anything else with both "
        "labels (an allow item, an exception for somebody else...) is read as hand-made, its allows and "
        "override priority reported",
        (
            BACKEND + "test_a_hand_made_policy_on_the_same_resources_is_merged_into_and_kept",
            REVIEW5 + "test_a_hand_made_policy_with_the_narrowing_label_is_read_as_hand_made",
            REVIEW5 + "test_a_narrowing_policy_given_an_allow_item_is_read_as_hand_made",
            NULL + "test_only_what_pushdown_writes_is_read_as_a_narrowing_policy",
        ),
    ),
    SurfaceEntry(
        "policy.type.masking",
        POLICY,
        "policyType 1 (data masking)",
        H,
        "never allows an access: not read, cannot widen; but Ranger 2.9 builds one resource matcher "
        "per resource name and policy resource for its whole engine, whatever the policy type "
        "(`RangerPluginContext`), and Hive's masking definition turns wildcards off: after an equal "
        "masking resource (`column=*` of another table), pushdown's `column=*` matches no table or "
        "column (narrower). Pushdown's deny items share `column=*` with the allows they cut, so they "
        "lose their wildcard together (the stand-in decides the same, judged by Ranger's engine)",
        (
            PATHS + "test_fields_that_only_narrow_or_only_audit_never_widen",
            REUSE + "test_a_masking_policy_before_the_access_policy_takes_its_wildcard",
            ADVERSARY,
        ),
    ),
    SurfaceEntry(
        "policy.type.row_filter",
        POLICY,
        "policyType 2 (row filter)",
        H,
        "never allows an access: not read, cannot widen; its resources share their matchers with "
        "equal access resources as masking ones do (wildcards off: after an equal row-filter "
        "resource, `table=?*` is a literal)",
        (
            PATHS + "test_fields_that_only_narrow_or_only_audit_never_widen",
            REUSE + "test_a_row_filter_policy_turns_a_table_wildcard_literal",
        ),
    ),
    SurfaceEntry(
        "policy.second_on_resources",
        POLICY,
        "a second policy on pushdown's resource set (another priority, or disabled)",
        R,
        "never taken for pushdown's; its items for model principals are reported",
        (HOSTILE + "test_a_second_policy_on_pushdowns_resources_is_never_taken_for_pushdowns",),
    ),
    SurfaceEntry(
        "policy.additional_resources",
        POLICY,
        "additionalResources",
        H,
        "pushdown's items never go into such a policy (its items apply to every set)",
        (HOSTILE + "test_pushdowns_items_never_go_into_a_policy_with_additional_resources",),
    ),
    SurfaceEntry(
        "item.delegate_admin",
        POLICY,
        "delegateAdmin on an item",
        (G, R),
        "an allow item with delegated admin naming pushdown's role (with no allowed access too) is "
        "reported and loses pushdown's roles at the next sync of its policy, whatever the model then "
        "wants there (its members keep neither the accesses nor the right to edit the policy through "
        "it); a deny item with delegated admin keeps its principals (taking one out would widen): its "
        "delegated admin is cleared at the next sync of its policy when it names nobody but pushdown's "
        "roles (then it is read as pushdown's own deny item), else it is reported",
        (
            REVIEW + "test_delegated_admin_on_pushdowns_allow_item_is_taken_out_and_reported",
            REVIEW + "test_delegated_admin_on_an_allow_item_then_the_grant_revoked_before_a_sync",
            REVIEW + "test_delegated_admin_alone_in_an_allow_item_for_pushdowns_role_is_taken_out",
            REVIEW + "test_delegated_admin_on_pushdowns_deny_item_keeps_the_deny_and_loses_the_admin",
            REVIEW + "test_a_copy_of_pushdowns_deny_item_with_delegated_admin_loses_the_admin",
            READ + "test_our_roles_leave_a_modified_allow_item_and_a_modified_deny_item_stays_whole",
            READ + "test_delegated_admin_without_an_allowed_access_is_a_marked_pair",
            READ + "test_a_copy_of_our_deny_item_with_delegated_admin_is_marked_then_one_item",
            ADVERSARY,
        ),
    ),
    # -- resources -------------------------------------------------------------------------------
    SurfaceEntry(
        "resource.excludes",
        RESOURCE,
        "isExcludes",
        (H, R),
        "an excluded resource never equals one pushdown writes; an override on one is treated as "
        "matching everything",
        (
            READ + "test_an_excluded_resource_never_equals_one_pushdown_writes",
            REVIEW + "test_override_policy_on_a_wider_resource_set_voids_the_deny",
        ),
    ),
    SurfaceEntry(
        "resource.recursive",
        RESOURCE,
        "isRecursive (HDFS paths)",
        (H, N),
        "every fileset policy is recursive; a nested fileset's deny items beat the enclosing allow, "
        "without deny items the enclosing allow goes only to users allowed both",
        (
            OPEN + "test_r2_a_deny_on_a_nested_fileset_beats_the_recursive_allow_of_its_parent",
            OPEN + "test_r2_without_deny_items_the_parent_location_takes_the_narrower_side",
            REVIEW + "test_a_fileset_whose_path_prefixes_another_does_not_enclose_it",
        ),
    ),
    SurfaceEntry(
        "resource.wildcards",
        RESOURCE,
        "wildcards * and ? in resource values",
        (H, N),
        "pushdown writes `table=?*` (not the database itself); a name with * or ? is not pushed "
        "(narrower); hand-made wildcards are matched when they may void deny items",
        (
            SHAPES + "test_the_every_table_policy_does_not_name_the_database_itself",
            SHAPES + "test_names_ranger_cannot_single_out_are_not_pushed",
        ),
    ),
    SurfaceEntry(
        "resource.create_on_a_table",
        RESOURCE,
        "`create` on a table resource (CREATE TABLE / CTAS / CREATE VIEW; on an existing table: "
        "REPLACE TABLE, CREATE OR REPLACE VIEW, Hudi compaction)",
        (H, N),
        "written where Hive's and Spark's Ranger plugins ask it (the every-table resource, not the "
        "database); a registered table denies it to whoever may not drop that table; without deny "
        "items none where one would be needed",
        (
            CREATE + "test_create_on_a_new_table_is_allowed_exactly_when_the_evaluator_allows_create_table",
            CREATE + "test_create_on_a_registered_table_goes_only_to_who_may_also_drop_it",
            SHAPES
            + "test_create_table_is_create_on_the_new_table_and_never_replaces_a_table_one_may_not_drop",
        ),
    ),
    SurfaceEntry(
        "resource.tokens",
        RESOURCE,
        "{USER} / {OWNER} tokens and \\ escapes in resource values",
        N,
        "a name holding them is not pushed (Ranger would read a token): narrower, a note",
        (OPEN + "test_a_table_named_with_rangers_user_token_is_not_a_resource",),
    ),
    SurfaceEntry(
        "resource.case",
        RESOURCE,
        "case-insensitive matching of Hive and Kafka resources",
        N,
        "names equal but for case are one resource: each access goes to the users allowed on all",
        (SHAPES + "test_case_twins_are_one_resource_with_the_users_allowed_on_both",),
    ),
    SurfaceEntry(
        "location.schemes",
        LOCATION,
        "hdfs:/p, hdfs:///p, hdfs://nn/p, webhdfs://, swebhdfs://, viewfs://, other file systems",
        (H, N),
        "every HDFS form is normalised to its path; viewfs and relative paths may be any HDFS path, so "
        "every enclosing allow is withheld from whoever the fileset denies; s3a and the like are no HDFS",
        (
            PATHS + "test_n2_a_denied_fileset_in_any_location_form_under_an_allowed_one_is_denied",
            OPEN + "test_a_fileset_on_another_file_system_is_no_hdfs_path",
        ),
    ),
    SurfaceEntry(
        "location.segments",
        LOCATION,
        "percent-encoding, . and .. segments, wildcards in a location",
        (H, N),
        "decoded and resolved as HDFS does; a location Ranger cannot name withholds the enclosing allow",
        (
            REVIEW + "test_a_percent_encoded_location_is_the_path_hdfs_holds",
            REVIEW + "test_a_denied_fileset_pushdown_cannot_name_inside_an_allowed_one",
            REVIEW + "test_a_location_ranger_cannot_name_withholds_the_enclosing_allow",
        ),
    ),
    # -- principals in items ---------------------------------------------------------------------
    SurfaceEntry(
        "principal.user",
        PRINCIPAL,
        "users in a hand-made item (model users, removed ones)",
        R,
        "a hand-made allow reaching a model user (or one pushdown has seen) is reported",
        (
            BACKEND + "test_a_hand_made_item_for_a_model_user_is_a_finding_and_left_alone",
            REVIEW + "test_a_removed_users_hand_made_allow_stays_reported",
        ),
    ),
    SurfaceEntry(
        "principal.group",
        PRINCIPAL,
        "groups in a hand-made item (the model's, or as the enforcing host resolves them)",
        (H, R),
        "pushdown's roles hold users, never groups; a DENY is written as deny items so a hand-made allow "
        "for a host-resolved group loses; an allow for a model group is reported",
        (
            OPEN + "test_r7_a_deny_through_a_group_holds_whatever_groups_the_host_resolves",
            REVIEW + "test_a_deny_on_a_topic_or_fileset_beats_a_hand_made_allow_for_a_host_group",
            REVIEW + "test_a_removed_groups_hand_made_allow_stays_reported",
        ),
    ),
    SurfaceEntry(
        "principal.public",
        PRINCIPAL,
        "the public group",
        R,
        "an allow for public reaches every user: reported",
        (PATHS + "test_a_hand_made_allow_to_the_public_group_is_a_finding",),
    ),
    SurfaceEntry(
        "principal.user_macro",
        PRINCIPAL,
        "{USER} in an item",
        R,
        "an allow for every user: reported",
        (HOSTILE + "test_a_hand_made_allow_to_every_user_is_a_finding",),
    ),
    SurfaceEntry(
        "principal.owner_macro",
        PRINCIPAL,
        "{OWNER} in an item",
        R,
        "an allow for whoever owns the resource in Ranger's eyes: reported",
        (HOSTILE + "test_a_hand_made_allow_to_owners_is_a_finding",),
    ),
    SurfaceEntry(
        "principal.role",
        PRINCIPAL,
        "roles in a hand-made item (pushdown's, or a hand-made role reaching model users)",
        (G, R),
        "a hand-made item naming pushdown's role is taken out; a hand-made role reaching model "
        "principals is reported where an item names it",
        (
            HOSTILE + "test_a_hand_made_item_naming_a_managed_role_is_taken_out_by_a_scoped_sync",
            REVIEW + "test_a_hand_made_allow_naming_pushdowns_role_on_a_wider_resource",
        ),
    ),
    SurfaceEntry(
        "principal.mapped_name",
        PRINCIPAL,
        "one Ranger user name for two model users (mapping, case)",
        N,
        "they get only what both may; names equal but for case are refused with a note",
        (
            HOSTILE + "test_x1_two_users_mapping_to_one_principal_get_only_what_both_may",
            OPEN + "test_users_one_ranger_name_but_for_case_are_refused",
        ),
    ),
    # -- roles -----------------------------------------------------------------------------------
    SurfaceEntry(
        "role.members",
        ROLE,
        "members of pushdown's roles",
        G,
        "members follow the model; one added by hand is removed; a per-user role edited by hand "
        "takes its user back before any join, and a join cycle never relies on one that lacks it",
        (
            REVIEW + "test_a_member_added_by_hand_to_pushdowns_role_is_removed",
            CYCLE + "test_a_per_user_role_edited_by_hand_takes_its_user_before_any_join",
            CYCLE + "test_a_per_user_role_edited_by_hand_never_leaves_a_join_cycle_wider",
        ),
    ),
    SurfaceEntry(
        "role.nested",
        ROLE,
        "nested roles (a role in pushdown's role, pushdown's role in a hand-made one)",
        (G, R),
        "a role nested by hand in pushdown's is removed and reported; pushdown's nested in another is "
        "reported",
        (
            HOSTILE + "test_r6_a_role_nested_by_hand_in_a_managed_role_is_removed_and_reported",
            HOSTILE + "test_r6_a_managed_role_nested_in_a_hand_made_role_is_reported",
            CYCLE + "test_a_join_to_a_role_only_deny_items_name_goes_early_unless_it_is_nested",
            CYCLE + "test_a_hand_made_role_holding_a_per_user_role_keeps_its_joins_among_the_joins",
            CYCLE_HOSTILE + "test_a_role_the_reads_index_finds_nested_keeps_its_joins_among_the_joins",
        ),
    ),
    SurfaceEntry(
        "role.admin",
        ROLE,
        "isAdmin on a role member",
        (G, R),
        "a role admin may grant the role to anyone: reset, reported",
        (REVIEW + "test_a_role_admin_flag_set_by_hand_on_pushdowns_role_is_reset_or_reported",),
    ),
    # -- the service and its plugin --------------------------------------------------------------
    SurfaceEntry(
        "service.deny_option",
        SERVICE,
        "enableDenyAndExceptionsInPolicies (service definition)",
        (H, N),
        "read every sync as Ranger reads it; off: no deny items, per-table allow items instead",
        (
            HOSTILE + "test_r4_the_deny_option_turned_off_while_running_is_read_by_the_next_scoped_sync",
            REVIEW + "test_the_deny_option_read_as_ranger_reads_it",
        ),
    ),
    SurfaceEntry(
        "service.implied_grants",
        SERVICE,
        "impliedGrants (service definition)",
        N,
        "an allow pair stays only where its holders are allowed every access it implies",
        (HOSTILE + "test_implied_grants_changed_underneath_never_widen",),
    ),
    SurfaceEntry(
        "service.zones",
        SERVICE,
        "security zones",
        (R, N),
        "inside a zone only its policies apply: a zone over what pushdown writes and zoned allows "
        "reaching model principals are reported",
        (HOSTILE + "test_r8_a_zone_over_a_managed_table_and_allows_inside_it_are_reported",),
    ),
    SurfaceEntry(
        "service.tag_service",
        SERVICE,
        "a linked tag service (tag-based policies)",
        R,
        "evaluated first, not read: reported",
        (REVIEW + "test_a_tag_service_linked_to_the_hive_service_is_reported",),
    ),
    SurfaceEntry(
        "service.super_users",
        SERVICE,
        "ranger.plugin.super.users / .groups (service configs)",
        R,
        "allowed everything, DENYs included: reported",
        (REVIEW + "test_super_users_in_a_service_config_are_reported",),
    ),
    SurfaceEntry(
        "service.enabled",
        SERVICE,
        "isEnabled (service)",
        R,
        "a disabled service enforces none of pushdown's policies (HDFS then falls back to HDFS "
        "permissions): reported",
        (PATHS + "test_a_disabled_service_and_service_admins_are_reported",),
    ),
    SurfaceEntry(
        "service.admin_users",
        SERVICE,
        "service.admin.users / .groups (service configs); Ranger Admin roles",
        R,
        "they may write the service's policies outside pushdown: reported; what they write is read "
        "like any hand-made policy",
        (PATHS + "test_a_disabled_service_and_service_admins_are_reported",),
    ),
    SurfaceEntry(
        "service.catalogs",
        SERVICE,
        "two catalogs with tables on one Hive service",
        (H, N),
        "each Hive policy holds only what every catalog holding its database allows, and every DENY; "
        "a catalog-wide DENY reaches the databases only the other catalogs register",
        (
            PATHS + "test_n8_a_second_catalog_with_tables_keeps_the_first_catalogs_deny_items",
            SHARED + "test_a_catalog_wide_deny_reaches_a_database_only_the_other_catalog_registers",
            PATHS + "test_n8_two_catalogs_naming_one_database_keep_what_both_decide",
            REVIEW + "test_a_new_empty_catalog_does_not_drop_the_hive_catalogs_deny_items",
        ),
    ),
    SurfaceEntry(
        "service.renamed",
        SERVICE,
        "pushdown's service settings changed (policies left in another service)",
        R,
        "labelled policies in a service pushdown no longer writes to are reported",
        (REVIEW + "test_changed_service_name_leaves_no_unreported_grant",),
    ),
    SurfaceEntry(
        "plugin.hadoop_fallback",
        SERVICE,
        "xasecure.add-hadoop-authorization (HDFS plugin: not determined falls back to HDFS permissions)",
        R,
        "pushdown cannot read the plugin's settings: a finding while it enforces filesets, until "
        "hdfs_fallback: off says the operator turned the fallback off",
        (PATHS + "test_n7_the_hdfs_plugins_fallback_to_hdfs_permissions_is_reported",),
    ),
)
