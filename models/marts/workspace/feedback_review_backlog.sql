-- The workspace feedback review backlog as of the report instant: rows by
-- review status (as it stood at as_of), source type and age bucket, with the
-- oldest row of each group. Age is measured from created_at to as_of in whole
-- days: '<1d' (0), '1-7d', '8-30d', '>30d' (the catalogue is the macro
-- review_age_buckets). The open work is status = 'pending'.

with feedback as (
    select * from {{ ref('int_workspace__feedback_as_of') }}
),

bucketed as (
    select
        status,
        source_type,
        created_at,
        {{ review_age_bucket('created_at') }} as age_bucket,
        {{ review_age_bucket_order('created_at') }} as age_bucket_order
    from feedback
),

per_bucket as (
    select
        status,
        source_type,
        age_bucket,
        age_bucket_order,
        -- `rows` is the contract's name (a keyword to sqlfluff, not reserved in DuckDB or Spark)
        count(*) as rows,  -- noqa: RF04
        min(created_at) as oldest_created_at,
        max(created_at) as newest_created_at
    from bucketed
    group by status, source_type, age_bucket, age_bucket_order
)

select * from per_bucket
