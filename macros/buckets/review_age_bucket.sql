{#-
    Age buckets of the workspace feedback review backlog, relative to the
    report instant. The catalogue lives here, once: each bucket is a label
    and the lowest and highest whole-day age it holds (none = no upper bound).
    A row's whole-day age is floor((as_of - created_at) / 1 day): '<1d' is
    younger than 24 hours, '1-7d' from 24 hours to just under 8 days, ...
-#}
{% macro review_age_buckets() -%}
    {{ return([
        {'label': '<1d', 'low': 0, 'high': 0},
        {'label': '1-7d', 'low': 1, 'high': 7},
        {'label': '8-30d', 'low': 8, 'high': 30},
        {'label': '>30d', 'low': 31, 'high': none},
    ]) }}
{%- endmacro %}

{#-
    Bucket label of a timestamp's age at as_of. A bucket with an upper bound
    of `high` whole days holds the rows created after `as_of - (high + 1) days`.
    Timestamps after as_of get none (callers filter them out first).
-#}
{% macro review_age_bucket(created_at) -%}
    case
        {%- for bucket in review_age_buckets() if bucket['high'] is not none %}
        when {{ created_at }} > {{ dbt.dateadd('day', -(bucket['high'] + 1), as_of_timestamp()) }}
            then '{{ bucket['label'] }}'
        {%- endfor %}
        {%- for bucket in review_age_buckets() if bucket['high'] is none %}
        else '{{ bucket['label'] }}'
        {%- endfor %}
    end
{%- endmacro %}

{#- Sort position of the bucket (1 = youngest). -#}
{% macro review_age_bucket_order(created_at) -%}
    case
        {%- for bucket in review_age_buckets() if bucket['high'] is not none %}
        when {{ created_at }} > {{ dbt.dateadd('day', -(bucket['high'] + 1), as_of_timestamp()) }}
            then {{ loop.index }}
        {%- endfor %}
        else {{ review_age_buckets() | length }}
    end
{%- endmacro %}
