-- Session feedback records the retention policy still keeps as of the report
-- instant (policy `session_feedback` of the seed retention_policies):
-- recorded_date on or after the cutoff date = as-of date minus keep_days;
-- a record dated strictly before it is what the next purge deletes (the
-- upstream rule). Records after as_of are not shown either.

with records as (
    select * from {{ ref('stg_session_feedback__records') }}
),

retained as (
    select
        records.feedback_id,
        records.session_id_opaque,
        records.user_id,
        records.recorded_at,
        records.recorded_date,
        records.label,
        records.turn_count_at_end,
        records.surface,
        records.modality,
        records.schema_version,
        records.insertion_order,
        records.loaded_at,
        records.load_id,
        records.source_uri,
        'session_feedback' as retention_policy
    from records
    where
        records.recorded_date >= {{
            retention_cutoff_date(retention_keep_days('session_feedback'))
        }}
        and records.recorded_at <= {{ as_of_timestamp() }}
)

select * from retained
