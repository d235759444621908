{#-
    Fails for every combination of `combination_of_columns` held by more
    than one row: the columns together form a key (a compound primary key
    when each is also not_null). Same arguments as
    dbt_utils.unique_combination_of_columns.
-#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

{%- if combination_of_columns | length == 0 -%}
    {{ exceptions.raise_compiler_error(
        "unique_combination_of_columns on " ~ model ~ ": combination_of_columns is empty"
    ) }}
{%- endif -%}

with duplicated_combinations as (
    select
        {% for column in combination_of_columns -%}
            {{ column }},
        {% endfor -%}
        count(*) as occurrences
    from {{ model }}
    group by
        {% for column in combination_of_columns -%}
            {{ column }}{{ "," if not loop.last }}
        {% endfor %}
    having count(*) > 1
)

select * from duplicated_combinations

{% endtest %}
