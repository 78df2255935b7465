/* An instant bot for the benchmarks: answers every new_game with ready and every turn
 * with a pass ([]), at once; quits on quit or at the end of its input. Any line length
 * (getline grows its buffer). The id is the first "id": of the line: the referee writes
 * "type" first and "id" second, so nothing of the game's view comes before it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, stdin) != -1) {
        const char *id = strstr(line, "\"id\":");
        long n = id ? strtol(id + 5, NULL, 10) : 0;
        if (strncmp(line, "{\"type\":\"turn\"", 14) == 0) {
            printf("{\"type\":\"turn\",\"id\":%ld,\"actions\":[]}\n", n);
        } else if (strncmp(line, "{\"type\":\"new_game\"", 18) == 0) {
            printf("{\"type\":\"ready\",\"id\":%ld,\"name\":\"instant\"}\n", n);
        } else if (strncmp(line, "{\"type\":\"quit\"", 14) == 0) {
            break;
        } else {
            continue;
        }
        fflush(stdout);
    }
    free(line);
    return 0;
}
