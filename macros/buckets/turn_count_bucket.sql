{#-
    Turn-count buckets of session feedback (the session's length when it
    ended). The catalogue lives here, once: each bucket is a label, the lowest
    turn count it holds and the highest (none = no upper bound). A session
    with 0 turns is its own bucket '0'; an unknown turn count is 'unknown'.
-#}
{% macro turn_count_buckets() -%}
    {{ return([
        {'label': '0', 'low': 0, 'high': 0},
        {'label': '1-2', 'low': 1, 'high': 2},
        {'label': '3-5', 'low': 3, 'high': 5},
        {'label': '6-10', 'low': 6, 'high': 10},
        {'label': '11-20', 'low': 11, 'high': 20},
        {'label': '21+', 'low': 21, 'high': none},
    ]) }}
{%- endmacro %}

{#- Bucket label of a turn count expression. -#}
{% macro turn_count_bucket(turn_count) -%}
    case
        {%- for bucket in turn_count_buckets() %}
        when {{ turn_count }} >= {{ bucket['low'] }}
            {%- if bucket['high'] is not none %} and {{ turn_count }} <= {{ bucket['high'] }}{% endif %}
            then '{{ bucket['label'] }}'
        {%- endfor %}
        else 'unknown'
    end
{%- endmacro %}

{#- Sort position of a turn count's bucket (1 = shortest sessions; unknown last). -#}
{% macro turn_count_bucket_order(turn_count) -%}
    case
        {%- for bucket in turn_count_buckets() %}
        when {{ turn_count }} >= {{ bucket['low'] }}
            {%- if bucket['high'] is not none %} and {{ turn_count }} <= {{ bucket['high'] }}{% endif %}
            then {{ loop.index }}
        {%- endfor %}
        else {{ turn_count_buckets() | length + 1 }}
    end
{%- endmacro %}
