{#- Per source table: the late window configured for it, the share of its rows that window captured
    and the smallest late window that would capture var late_window_target_share of them (the
    package's late_data.recommended_late_windows, which every pipeline's lateness view also uses). -#}

with

arrivals as (

    select * from {{ ref('int_late_data__arrivals') }}

),

recommendations as (

    {{ late_data.recommended_late_windows('arrivals') }}

)

select * from recommendations
