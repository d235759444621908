-- The semantic layer's time spine (MetricFlow): one row per UTC day from
-- 2020-01-01 to 2040-12-31, at day grain (week and month are derived).

with days as (
    {{ day_spine("cast('2020-01-01' as date)", "cast('2040-12-31' as date)") }}
),

spine as (
    select spine_date as date_day
    from days
)

select * from spine
