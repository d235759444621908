-- One row per conversation of conversation_feedback_summary with its
-- satisfaction rate, ok / (ok + not_ok + neutral) active reactions, and the
-- rate's 95% Wilson interval (reaction_satisfaction_rate): the
-- Conversations page's list.

with conversations as (
    select * from {{ ref('conversation_feedback_summary') }}
),

rates as (
    select
        tenant,
        tenant_name,
        source_tenant_id,
        project,
        conversation_id,
        last_activity_at,
        total,
        {{ adapter.quote('user') }},
        machine,
        ok,
        not_ok,
        neutral,
        {{ reaction_satisfaction_rate() }}
    from conversations
)

select * from rates
