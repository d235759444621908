{#-
    The rates of the feedback marts, each formula written once: the marts
    that report a rate call these on their own counts.
-#}

{#-
    The two rates of end-of-session answers as (rate_name, successes, n):
    positive_rate = positive / (positive + negative), skips excluded;
    skip_rate = skip / responses. metric_rates_daily names them
    session_<rate_name>.
-#}
{% macro session_answer_rate_terms() -%}
    {{ return([
        ('positive_rate', 'positive', 'positive + negative'),
        ('skip_rate', 'skip', 'responses'),
    ]) }}
{%- endmacro %}

{#- positive_rate and skip_rate with their 95% Wilson intervals (six select targets). -#}
{% macro session_answer_rates() -%}
    {%- for rate_name, successes, n in session_answer_rate_terms() %}
        {{ rate_with_interval(successes, n, rate_name) }}{{ "," if not loop.last }}
    {%- endfor %}
{%- endmacro %}

{#- satisfaction_rate = ok / (ok + not_ok + neutral) with its 95% Wilson interval (three select targets). -#}
{% macro reaction_satisfaction_rate() -%}
    {{ rate_with_interval('ok', 'ok + not_ok + neutral', 'satisfaction_rate') }}
{%- endmacro %}
