/*
 * libretro_bench: times a libretro core the way a frontend runs it, for
 * scripts/bench-peers.sh.
 *
 *   libretro_bench CORE.so ROM FRAMES WARMUP
 *
 * Loads CORE.so with dlopen, loads ROM, runs WARMUP untimed frames, then times
 * FRAMES calls of retro_run and prints one JSON object on stdout:
 *   {"fps": ..., "frames": ..., "sample_rate": ..., ...}
 * Exit status 2 means the core refused the ROM (retro_load_game returned
 * false), so the caller can report "n/a" for it; 1 is any other failure.
 *
 * Every frame the video callback copies the picture into a buffer of our own
 * (what a frontend does before handing it to a texture) and the audio callback
 * reads every sample: a peer must pay for its output as our `nes bench` does
 * (48 kHz audio read, picture converted to RGBA), or the comparison flatters it.
 *
 * Only the part of the libretro C ABI used here is declared, below.
 * Build: gcc -O2 -o libretro_bench libretro_bench.c -ldl
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- The libretro ABI subset this frontend uses (values per libretro.h). --- */

enum {
    ENV_GET_SYSTEM_DIRECTORY = 9,
    ENV_SET_PIXEL_FORMAT = 10,
    ENV_GET_SAVE_DIRECTORY = 31,
};
enum { PIXEL_FORMAT_XRGB8888 = 1 };

struct game_info {
    const char *path;
    const void *data;
    size_t size;
    const char *meta;
};

struct system_info {
    const char *library_name;
    const char *library_version;
    const char *valid_extensions;
    bool need_fullpath;
    bool block_extract;
};

struct system_av_info {
    struct {
        unsigned base_width, base_height, max_width, max_height;
        float aspect_ratio;
    } geometry;
    struct {
        double fps;
        double sample_rate;
    } timing;
};

typedef bool (*environment_fn)(unsigned cmd, void *data);
typedef void (*video_refresh_fn)(const void *data, unsigned width, unsigned height, size_t pitch);
typedef void (*audio_sample_fn)(int16_t left, int16_t right);
typedef size_t (*audio_sample_batch_fn)(const int16_t *data, size_t frames);
typedef void (*input_poll_fn)(void);
typedef int16_t (*input_state_fn)(unsigned port, unsigned device, unsigned index, unsigned id);

/* --- Frontend state. --- */

static char dir_buf[4096];  /* system and save directory handed to the core */
static int pixel_format = -1;

/* The copy of the last picture, as a frontend keeps it for its texture upload. */
static uint8_t *frame_copy;
static size_t frame_copy_size;
static uint64_t video_frames;
static uint64_t video_checksum;

static uint64_t audio_frames;   /* stereo sample pairs received */
static int64_t audio_sum;       /* sum of every sample, so no read can be skipped */

static bool on_environment(unsigned cmd, void *data)
{
    switch (cmd) {
    case ENV_SET_PIXEL_FORMAT: {
        /* Only 32-bit XRGB: our emulator's RGBA frame is 32 bits a pixel too. */
        int fmt = *(const int *)data;
        if (fmt != PIXEL_FORMAT_XRGB8888)
            return false;
        pixel_format = fmt;
        return true;
    }
    case ENV_GET_SYSTEM_DIRECTORY:
    case ENV_GET_SAVE_DIRECTORY:
        *(const char **)data = dir_buf;
        return true;
    default:
        /* Unanswered queries (core options, logging, ...) leave the core on its defaults. */
        return false;
    }
}

static void on_video(const void *data, unsigned width, unsigned height, size_t pitch)
{
    /* NULL means "same picture as before" (frame duping); nothing new to read. */
    if (data == NULL)
        return;
    size_t row = (size_t)width * 4;
    size_t need = row * height;
    if (need > frame_copy_size) {
        free(frame_copy);
        frame_copy = malloc(need);
        if (frame_copy == NULL) {
            fprintf(stderr, "libretro_bench: out of memory\n");
            exit(1);
        }
        frame_copy_size = need;
    }
    /* Row by row: the core's pitch may be wider than the visible picture. */
    const uint8_t *src = data;
    for (unsigned y = 0; y < height; y++)
        memcpy(frame_copy + y * row, src + y * pitch, row);
    /* A few bytes per line from the copy, so the copy itself is observably used. */
    for (unsigned y = 0; y < height; y++)
        video_checksum += frame_copy[y * row + (y % width) * 4];
    video_frames++;
}

static size_t on_audio_batch(const int16_t *data, size_t frames)
{
    int64_t sum = 0;
    for (size_t i = 0; i < frames * 2; i++)
        sum += data[i];
    audio_sum += sum;
    audio_frames += frames;
    return frames;
}

static void on_audio_sample(int16_t left, int16_t right)
{
    audio_sum += left + right;
    audio_frames++;
}

static void on_input_poll(void) {}

static int16_t on_input_state(unsigned port, unsigned device, unsigned index, unsigned id)
{
    (void)port; (void)device; (void)index; (void)id;
    return 0;  /* no buttons held, as in our bench */
}

static void *must_sym(void *lib, const char *name)
{
    void *sym = dlsym(lib, name);
    if (sym == NULL) {
        fprintf(stderr, "libretro_bench: core lacks %s\n", name);
        exit(1);
    }
    return sym;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *grown = realloc(buf, cap);
            if (grown == NULL) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = grown;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    fclose(f);
    *size = len;
    return buf;
}

/* JSON string body: enough escaping for names and versions reported by a core. */
static void print_json_string(const char *s)
{
    putchar('"');
    for (; s != NULL && *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            putchar(*s);
    }
    putchar('"');
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s CORE.so ROM FRAMES WARMUP\n", argv[0]);
        return 1;
    }
    const char *core_path = argv[1];
    const char *rom_path = argv[2];
    long frames = strtol(argv[3], NULL, 10);
    long warmup = strtol(argv[4], NULL, 10);
    if (frames <= 0 || warmup < 0) {
        fprintf(stderr, "libretro_bench: FRAMES must be > 0 and WARMUP >= 0\n");
        return 1;
    }

    /* A private directory, so no save file from an earlier run changes what is measured. */
    const char *tmp = getenv("TMPDIR");
    snprintf(dir_buf, sizeof dir_buf, "%s/libretro_bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(dir_buf) == NULL) {
        perror("libretro_bench: mkdtemp");
        return 1;
    }

    void *lib = dlopen(core_path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "libretro_bench: %s\n", dlerror());
        return 1;
    }

    void (*set_environment)(environment_fn) = must_sym(lib, "retro_set_environment");
    void (*set_video_refresh)(video_refresh_fn) = must_sym(lib, "retro_set_video_refresh");
    void (*set_audio_sample)(audio_sample_fn) = must_sym(lib, "retro_set_audio_sample");
    void (*set_audio_sample_batch)(audio_sample_batch_fn) = must_sym(lib, "retro_set_audio_sample_batch");
    void (*set_input_poll)(input_poll_fn) = must_sym(lib, "retro_set_input_poll");
    void (*set_input_state)(input_state_fn) = must_sym(lib, "retro_set_input_state");
    void (*retro_init)(void) = must_sym(lib, "retro_init");
    void (*retro_deinit)(void) = must_sym(lib, "retro_deinit");
    void (*get_system_info)(struct system_info *) = must_sym(lib, "retro_get_system_info");
    void (*get_system_av_info)(struct system_av_info *) = must_sym(lib, "retro_get_system_av_info");
    bool (*load_game)(const struct game_info *) = must_sym(lib, "retro_load_game");
    void (*unload_game)(void) = must_sym(lib, "retro_unload_game");
    void (*retro_run)(void) = must_sym(lib, "retro_run");

    /* The environment goes first: cores may query it from retro_init on. */
    set_environment(on_environment);
    retro_init();
    set_video_refresh(on_video);
    set_audio_sample(on_audio_sample);
    set_audio_sample_batch(on_audio_batch);
    set_input_poll(on_input_poll);
    set_input_state(on_input_state);

    struct system_info sys;
    memset(&sys, 0, sizeof sys);
    get_system_info(&sys);

    /* Path and contents both: cores that want a path (need_fullpath) read it themselves. */
    struct game_info game;
    memset(&game, 0, sizeof game);
    game.path = rom_path;
    void *rom = read_file(rom_path, &game.size);
    if (rom == NULL) {
        fprintf(stderr, "libretro_bench: cannot read %s\n", rom_path);
        return 1;
    }
    game.data = rom;
    if (!load_game(&game)) {
        fprintf(stderr, "libretro_bench: the core refused %s\n", rom_path);
        printf("{\"error\":\"rom rejected\"}\n");
        return 2;
    }
    if (pixel_format != PIXEL_FORMAT_XRGB8888) {
        /* A core that never asked would send 0RGB1555: a 16-bit picture is not what we compare. */
        fprintf(stderr, "libretro_bench: the core did not select XRGB8888\n");
        return 1;
    }

    struct system_av_info av;
    memset(&av, 0, sizeof av);
    get_system_av_info(&av);

    for (long i = 0; i < warmup; i++)
        retro_run();

    uint64_t video_before = video_frames, audio_before = audio_frames;
    double start = now_seconds();
    for (long i = 0; i < frames; i++)
        retro_run();
    double elapsed = now_seconds() - start;
    uint64_t video_timed = video_frames - video_before;
    uint64_t audio_timed = audio_frames - audio_before;

    printf("{\"fps\":%.3f,\"frames\":%ld,\"warmup\":%ld,\"seconds\":%.6f,"
           "\"core\":",
           frames / elapsed, frames, warmup, elapsed);
    print_json_string(sys.library_name);
    printf(",\"core_version\":");
    print_json_string(sys.library_version);
    printf(",\"sample_rate\":%.1f,\"audio_frames_per_frame\":%.1f,"
           "\"video_frames\":%llu,\"checksum\":%llu}\n",
           av.timing.sample_rate, (double)audio_timed / (double)frames,
           (unsigned long long)video_timed,
           (unsigned long long)(video_checksum + (uint64_t)audio_sum));

    unload_game();
    retro_deinit();
    /* No dlclose: some cores leave threads or atexit handlers behind; the process ends here. */
    free(rom);
    free(frame_copy);
    rmdir(dir_buf);  /* only if the core left nothing in it */
    return 0;
}
