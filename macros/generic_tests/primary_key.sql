{#-
    A primary key in one pass: fails for every key value that is null or
    held by more than one row. On a column (`column_name`) or on a compound
    key (`columns`, a list; a row fails when any part is null). Equivalent to
    unique + not_null, but reads the model once: on a view over millions of
    rows that halves the cost of the check.
-#}
{% test primary_key(model, column_name=none, columns=none) %}

{%- set key_columns = columns if columns is not none else [column_name] -%}
{%- if key_columns | length == 0 or key_columns[0] is none -%}
    {{ exceptions.raise_compiler_error(
        "primary_key on " ~ model ~ ": put it on a column or give `columns`"
    ) }}
{%- endif %}

with key_values as (
    select
        {% for column in key_columns -%}
            {{ column }}{{ "," if not loop.last }}
        {% endfor %}
    from {{ model }}
),

violations as (
    select
        {% for column in key_columns -%}
            {{ column }},
        {% endfor -%}
        count(*) as occurrences
    from key_values
    group by
        {% for column in key_columns -%}
            {{ column }}{{ "," if not loop.last }}
        {% endfor %}
    having
        count(*) > 1
        {% for column in key_columns -%}
            or {{ column }} is null
        {% endfor %}
)

select * from violations

{% endtest %}
