-- Every feedback signal of every source on one shape (docs/metrics.md,
-- "Unified feedback signals"): one row per signal at or before the report instant, its
-- source label mapped to the common rating (positive / negative / neutral /
-- skip) by the seed feedback_label_ratings. A label the seed does not map
-- keeps a null rating (the not_null test on rating fails the build: add the
-- label to the seed). `tenant` is the one tenant key across sources, with its
-- display name, from int_tenants__mapped (the seed `tenants`; an id the seed
-- does not list is its own key); source_tenant_id is the source's own id.

with signals as (
    select * from {{ ref('int_signals__unioned') }}
),

label_ratings as (
    select * from {{ ref('feedback_label_ratings') }}
),

tenants as (
    select * from {{ ref('int_tenants__mapped') }}
),

rated as (
    select
        signals.signal_id,
        signals.source_system,
        signals.occurred_at,
        cast(signals.occurred_at as date) as occurred_date,
        tenants.tenant_key as tenant,
        tenants.tenant_name,
        signals.source_tenant_id,
        signals.subject_type,
        signals.subject_id,
        signals.origin,
        signals.source_label,
        label_ratings.rating,
        signals.confidence,
        signals.retention_policy
    from signals
    left join label_ratings
        on
            signals.rating_source_system = label_ratings.source_system
            and signals.source_label = label_ratings.label
    left join tenants
        on
            signals.source_system = tenants.source_system
            and signals.source_tenant_id = tenants.source_tenant_id
)

select * from rated
