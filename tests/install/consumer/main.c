/* tests/install/consumer/main.c — records three ticks and plays them back through the installed
 * headers and library only. Exit 0 when the round trip holds. */
#include <stdio.h>
#include <string.h>

#include <detgate/flrep.h>

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    dg_flrep_type type = {0, dg_flrep_cstr("jet"), dg_flrep_cstr("Jet"), 1, 0};
    dg_flrep_faction fac = {0, dg_flrep_cstr("blue"), dg_flrep_cstr("Blue")};
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("consumer 1");
    h.tick_rate_hz = 60;
    h.planet_radius_m = 6371000;
    h.types = &type;
    h.type_count = 1;
    h.factions = &fac;
    h.faction_count = 1;
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_writer *w;
    if (dg_flrep_writer_open(&w, argv[1], &h, NULL, &err))
        return 1;
    dg_qentity written[3];
    for (int t = 0; t < 3; t++) {
        dg_entity_in e = {.id = 1, .pos = {t * 5.0, 0, 6.4e6}, .vel = {300, 0, 0}, .rot = {1, 0, 0, 0}, .health = 1};
        if (dg_flrep_writer_tick(w, (uint64_t)t, &e, 1, NULL, 0, &written[t], &err))
            return 1;
    }
    if (dg_flrep_writer_close(w, &err))
        return 1;
    dg_flrep_reader *r;
    if (dg_flrep_reader_open_file(&r, argv[1], NULL, &err))
        return 1;
    dg_flrep_tick t;
    int n = 0;
    while (dg_flrep_reader_next(r, &t, &err) == 1) {
        if (t.ent_count != 1 || !dg_qentity_equal(&t.ents[0], &written[n]))
            return 1;
        n++;
    }
    dg_flrep_reader_close(r);
    printf("consumer: %d ticks round-tripped\n", n);
    return n == 3 ? 0 : 1;
}
