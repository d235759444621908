{#-
    The first `words` words of a text (words: runs of anything but spaces,
    tabs and line breaks), joined by single spaces, with an ellipsis (…) when
    the text has more; null for null or blank text. Used to name golden
    sessions by their initial message.

    Whitespace runs become one space first: regexp_replace replaces every
    match on Spark, and only with the 'g' option on DuckDB. The patterns hold
    no backslash escape a SQL literal could change (`\t` reaches either
    regex engine as a tab or as its escape, both a tab).
-#}
{% macro first_words(text, words) -%}
    {{ return(adapter.dispatch('first_words', 'feedback_analytics')(text, words)) }}
{%- endmacro %}

{% macro default__first_words(text, words) -%}
    {{ _first_words_of(
        "trim(regexp_replace(" ~ text ~ ", '[ \\t\\n\\r]+', ' '))", words
    ) }}
{%- endmacro %}

{% macro duckdb__first_words(text, words) -%}
    {{ _first_words_of(
        "trim(regexp_replace(" ~ text ~ ", '[ \\t\\n\\r]+', ' ', 'g'))", words
    ) }}
{%- endmacro %}

{% macro _first_words_of(collapsed, words) -%}
    case
        when nullif({{ collapsed }}, '') is not null then
            regexp_extract({{ collapsed }}, '^([^ ]+( [^ ]+){0,{{ words - 1 }}})', 1)
            || case
                when length({{ collapsed }})
                    > length(regexp_extract({{ collapsed }}, '^([^ ]+( [^ ]+){0,{{ words - 1 }}})', 1))
                    then '…'
                else ''
            end
    end
{%- endmacro %}
