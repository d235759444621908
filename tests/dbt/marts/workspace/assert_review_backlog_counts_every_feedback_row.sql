-- The review backlog counts every workspace feedback row given at or before
-- as_of exactly once, per status. Returns one row per status whose counts
-- differ.

with feedback as (
    select * from {{ ref('int_workspace__feedback_as_of') }}
),

backlog as (
    select * from {{ ref('feedback_review_backlog') }}
),

feedback_per_status as (
    select
        status,
        count(*) as feedback_rows
    from feedback
    group by status
),

backlog_per_status as (
    select
        status,
        sum(rows) as backlog_rows
    from backlog
    group by status
),

compared as (
    select
        coalesce(feedback_per_status.status, backlog_per_status.status) as status,
        coalesce(feedback_per_status.feedback_rows, 0) as feedback_rows,
        coalesce(backlog_per_status.backlog_rows, 0) as backlog_rows
    from feedback_per_status
    full outer join backlog_per_status
        on feedback_per_status.status = backlog_per_status.status
),

mismatched as (
    select * from compared
    where feedback_rows != backlog_rows
)

select * from mismatched
