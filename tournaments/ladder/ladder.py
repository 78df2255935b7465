"""Running a ladder: watch the entries, check new versions, choose tables, play, record.

:func:`run_ladder` is the coordinator, as :func:`~tournaments.runner.run_tournament` is
a tournament's, and keeps the ladder's folder the same way: a lock on it, the results
store ``results.sqlite`` (the truth: every game, each committed as it ends, its players
the versions ``alice@v2``), ``games.pgn`` (rewritten from the store at every start, then
appended), ``logs/``, ``bots.pids``; and beside them the registry ``ladder.sqlite``
(:mod:`tournaments.ladder.registry`) and the site (:mod:`tournaments.ladder.site`).

Three things go on at once in one trio nursery:

- **the watcher** reads the entries folder (:mod:`tournaments.ladder.entries`) every
  ``scan_interval`` seconds: each new complete version is registered (``pending``), then
  given the start-up check (:func:`~tournaments.workers.check_players`) and settled
  ``active`` or ``refused`` with one line in the log (stderr, the registry, the site);
  ``RETIRED`` markers retire and un-retire entrants;
- **the games**: ``concurrency`` slots of a pool (worker processes by default, as in a
  tournament), each choosing the next table (:mod:`tournaments.ladder.matchmaking`)
  among the newest active versions, free of other games, at the moment it starts;
- a pool holds the commands it was opened with, so when a version becomes active the
  slots finish the game they are playing, the pool is closed and opened again with
  the new field. A retired or replaced version is dropped from the choice at once.

A game is numbered when its attempt starts (one past every game and attempt stored);
an attempt cut by a kill, or lost with its worker, is noted as abandoned and its number
is not used again, so game numbers can have gaps. The ratings are the stored games
replayed in number order (:mod:`tournaments.ladder.standings`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from referee.errors import RefereeError
from referee.games import game_seed
from referee.match import MatchConfig
from referee.preflight import PreflightError
from referee.process import BotCommand, stop_leftovers
from tournaments.ladder.entries import EntryError, Scan, manifest_command, scan
from tournaments.ladder.matchmaking import Candidate, History, choose_table
from tournaments.ladder.registry import REGISTRY, Registry, State, Version
from tournaments.ladder.settings import LadderConfig
from tournaments.ladder.site import write_site
from tournaments.ladder.standings import Row, Standings
from tournaments.recovery import pgn_games
from tournaments.runner import BOT_PIDS, LOGS, locked_output, next_run_directory, write_atomically
from tournaments.site import game_page_path
from tournaments.store import (
    DATABASE,
    PGN,
    DamagedStore,
    ResultStore,
    append_pgn,
    salvage,
    salvage_attempts,
    set_aside,
)
from tournaments.workers import (
    GameDone,
    GameJob,
    GameLost,
    Pool,
    PoolFactory,
    Warn,
    Work,
    check_players,
    process_pool,
)

Board = Callable[["LadderRun"], None]
"""Told after each change (a game recorded, a version settled) to redraw the leaderboard."""

SITE_TICK = 2.0
"""The most seconds between two writes of the site while games end."""


class LadderError(RefereeError):
    """The ladder cannot run: its folder is read-only, or another run holds it."""


async def run_ladder(
    config: LadderConfig,
    *,
    games: int | None = None,
    pool: PoolFactory | None = None,
    warn: Warn | None = None,
    board: Board | None = None,
) -> Finished:
    """Run the ladder until stopped (Ctrl-C), or until its store holds ``games`` games."""
    say = warn or (lambda line: None)
    with locked_output(config.output) as writable:
        if not writable:
            raise LadderError(f"cannot run the ladder in {config.output}: it is read-only")
        run = LadderRun.open(config, say)
        try:
            frozen = run.registry.frozen()
            if frozen is not None:
                raise LadderError(
                    f"submissions were frozen for the final at {frozen}:"
                    " the ladder plays no more games"
                )
            stop_leftovers(config.output / BOT_PIDS)
            await run.play(games, pool or process_pool, board)
            rows = run.standings.leaderboard(run.versions(), run.registry.retired())
            return Finished(rows, run.standings.count)
        finally:
            run.close()


@dataclass(frozen=True, slots=True)
class Finished:
    """A ladder run that ended: its leaderboard and how many games it holds."""

    rows: list[Row]
    games: int


def open_store(output: Path, config_json: str, warn: Warn) -> ResultStore:
    """The ladder's results store, checked; a damaged one is moved aside and rebuilt from
    its readable rows (one warning line)."""
    path = output / DATABASE
    try:
        store = ResultStore.open(path)
    except DamagedStore as damage:
        saved, rows = salvage(path)
        attempts = salvage_attempts(path)
        moved = set_aside(path)
        games = {game.index: game for game in pgn_games(output / PGN)}
        from_pgn = len(games)
        games.update((game.index, game) for game in rows)
        warn(
            f"{damage}; moved aside as {moved.name} and rebuilt from its {len(rows)}"
            f" readable games and the {from_pgn} of {PGN} ({len(games)} games in all)"
        )
        store = ResultStore.open(path)
        store.replace_games(games[index] for index in sorted(games))
        store.restore_attempts(attempts)
        if saved is not None:
            store.save_config(saved)
    store.check_or_save_config(config_json)
    return store


@dataclass
class LadderRun:
    """An open ladder: its settings, store, registry and the standings from its games."""

    config: LadderConfig
    store: ResultStore
    registry: Registry
    standings: Standings
    history: History
    warn: Warn
    busy: set[str] = field(default_factory=set)
    commands: dict[str, BotCommand] = field(default_factory=dict)
    next_index: int = 0
    playing: int = 0
    """Games being played now."""
    board: Board | None = None
    _wakeup: trio.Event = field(default_factory=trio.Event)
    _field_changed: trio.Event = field(default_factory=trio.Event)
    _site_written: float = 0.0
    _matched: list[Version] | None = None

    @classmethod
    def open(cls, config: LadderConfig, warn: Warn) -> LadderRun:
        output = config.output
        store = open_store(output, config.to_json(), warn)
        for attempt in store.abandon_unfinished("the ladder stopped while it was played"):
            warn(
                f"game {attempt.index + 1} was cut short by the last run's end;"
                " its number is not used again"
            )
        store.sync_pgn(output / PGN)
        registry, damaged = Registry.open(output / REGISTRY)
        if damaged is not None:
            warn(damaged)
        games = store.games(pgn=False)
        standings = Standings.of(games)
        history = History(config.seats)
        for game in sorted(games, key=lambda g: g.index):
            history.note(game.players)
        attempted = [a.index for a in store.attempts()]
        last = max([g.index for g in games] + attempted, default=-1)
        run = cls(config, store, registry, standings, history, warn, next_index=last + 1)
        if damaged is not None:
            # Rebuilt from the entries folder: a version with games stored passed its check.
            played = set(standings.games)
            for submission in scan(config.entries).submissions:
                added = registry.add_version(
                    submission.entrant, submission.version, submission.player, submission.manifest
                )
                if added and submission.player in played:
                    registry.settle(submission.player, State.ACTIVE)
        return run

    def close(self) -> None:
        self.registry.close()
        self.store.close()

    # --- the field ---------------------------------------------------------------

    def versions(self) -> list[Version]:
        return self.registry.versions()

    def matched(self) -> list[Version]:
        """The newest active version of each entrant not retired: those matched and ranked
        (kept between changes to the registry, which each clear it)."""
        if self._matched is None:
            retired = self.registry.retired()
            newest: dict[str, Version] = {}
            for version in self.versions():
                if version.state is State.ACTIVE and version.entrant not in retired:
                    newest[version.entrant] = version
            self._matched = list(newest.values())
        return self._matched

    def command(self, version: Version) -> BotCommand:
        return manifest_command(
            version.manifest, self.config.entries / version.entrant / version.version
        )

    def work(self, log_dir: Path | None) -> Work:
        """The pool's work for the field now: the matched versions' commands; no bot sees the
        ladder's other versions' folders, nor the ladder's folder."""
        commands: dict[str, BotCommand] = {}
        for version in self.matched():
            try:
                commands[version.player] = self.command(version)
            except EntryError as error:  # its manifest was readable when it was checked
                self.say(f"{version.player} cannot be started now: {error}")
        match = self.match_config()
        sandbox = dataclasses.replace(match.sandbox, ledger=self.config.output / BOT_PIDS)
        return Work(
            match=dataclasses.replace(match, sandbox=sandbox),
            commands=commands,
            seats=self.config.seats,
            log_dir=log_dir,
        )

    def match_config(self) -> MatchConfig:
        """The ladder's match settings, hiding from every bot each entrant's folder but its
        own (the sandbox never hides the folder a bot runs in): its versions, refused and
        retired ones, and copies still coming in. Made anew for each start-up check and
        each pool, so an entrant who joined since is hidden too."""
        match = self.config.match_config()
        entries = self.config.entries
        folders = (
            sorted(path for path in entries.iterdir() if path.is_dir()) if entries.is_dir() else []
        )
        return dataclasses.replace(match, sandbox=match.sandbox.hiding(*folders))

    def say(self, line: str) -> None:
        """One line in the ladder's log: stderr (as a warning) and the registry (the site)."""
        self.warn(line)
        self.registry.log(line)

    # --- the watcher -------------------------------------------------------------

    async def scan_once(self) -> None:
        """Register what the entries folder holds now, and check every pending version."""
        if self.registry.frozen() is not None:
            return
        found: Scan = await trio.to_thread.run_sync(scan, self.config.entries)
        for submission in found.submissions:
            if self.registry.add_version(
                submission.entrant, submission.version, submission.player, submission.manifest
            ):
                self.registry.log(f"{submission.player} submitted")
        retired = self.registry.retired()
        known = {v.entrant for v in self.versions()}
        for name in sorted(known):
            now = name in found.retired
            if now != (name in retired):
                self._matched = None
                self.registry.set_retired(
                    name, now, f"{name} {'retired' if now else 'back from retirement'}"
                )
                self.warn(f"{name} {'retired' if now else 'back from retirement'}")
                self._wake()
        for version in self.versions():
            if version.state is State.PENDING:
                await self.check(version)

    async def check(self, version: Version) -> None:
        """The start-up check of one pending version; settles it, one line either way."""
        try:
            command = self.command(version)
            work = Work(
                match=self.match_config(),
                commands={version.player: command},
                seats=self.config.seats,
            )
            await check_players(work, [version.player], None)
        except (EntryError, PreflightError) as error:
            why = error.failures.get(version.player) if isinstance(error, PreflightError) else None
            reason = " ".join((why or str(error)).split())
            line = f"{version.player} refused: {reason}"
            previous = [v for v in self.matched() if v.entrant == version.entrant]
            if previous:
                line += f" ({previous[0].player} keeps playing)"
            self._matched = None
            self.registry.settle(version.player, State.REFUSED, reason, line)
            self.warn(line)
        else:
            self._matched = None
            self.registry.settle(version.player, State.ACTIVE, "", f"{version.player} accepted")
            self._field_changed.set()
            self._wake()  # a slot waiting for players reopens the pool at once
        self._refresh(force=True)

    async def watch(self) -> None:
        while True:
            await self.scan_once()
            await trio.sleep(self.config.scan_interval)

    # --- the games ---------------------------------------------------------------

    def _wake(self) -> None:
        self._wakeup.set()
        self._wakeup = trio.Event()

    def candidates(self, commands: dict[str, BotCommand]) -> list[Candidate]:
        out = []
        for version in self.matched():
            if version.player in commands:
                skill = self.standings.skill(version.player)
                out.append(
                    Candidate(
                        version.player,
                        skill.mu,
                        skill.sigma,
                        self.standings.games.get(version.player, 0),
                    )
                )
        return out

    def choose(self, commands: dict[str, BotCommand]) -> tuple[str, ...] | None:
        return choose_table(
            self.candidates(commands), self.busy, self.history, self.config.placement_games
        )

    async def play(self, games: int | None, pool: PoolFactory, board: Board | None) -> None:
        self.board = board
        logs = next_run_directory(self.config.output / LOGS)
        slots = self.config.template.concurrency
        await self.scan_once()
        self._refresh(force=True)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.watch)
            while not self._done(games):
                self._field_changed = trio.Event()
                work = self.work(logs)
                self.commands = dict(work.commands)
                async with pool(work, slots) as opened, trio.open_nursery() as slots_nursery:
                    for slot in range(slots):
                        slots_nursery.start_soon(self._slot, opened, slot, games)
            nursery.cancel_scope.cancel()
        self._refresh(force=True)

    def _done(self, games: int | None) -> bool:
        return games is not None and self.store.count() >= games

    async def _slot(self, pool: Pool, slot: int, games: int | None) -> None:
        while not self._field_changed.is_set():
            if games is not None and self.store.count() + self.playing >= games:
                if not self.playing:
                    self._field_changed.set()  # done: let the pool close
                    self._wake()
                    return
                await self._wakeup.wait()
                continue
            table = self.choose(self.commands)
            if table is None:
                with trio.move_on_after(self.config.scan_interval):
                    await self._wakeup.wait()
                continue
            await self._play_one(pool, slot, table)
        self._wake()

    async def _play_one(self, pool: Pool, slot: int, table: tuple[str, ...]) -> None:
        index = self.next_index
        self.next_index += 1
        self.busy.update(table)
        self.playing += 1
        try:
            attempt = self.store.start_attempt(index)
            seed = game_seed(self.config.template.seed, index, attempt)
            job = GameJob(
                index=index, players=table, round=str(index + 1), seed=seed, attempt=attempt
            )
            try:
                done = await pool.play(slot, job)
            except GameLost as lost:
                self.store.abandon_attempt(index, attempt, lost.cause)
                self.warn(
                    f"game {index + 1} was lost ({lost.cause}{lost.hint});"
                    " its number is not used again"
                )
                return
            self._save(done)
        finally:
            self.playing -= 1
            self.busy.difference_update(table)
            self._wake()

    def _save(self, done: GameDone) -> None:
        output = self.config.output
        game = done.game
        if done.logs:
            (output / LOGS).mkdir(parents=True, exist_ok=True)
            write_atomically(
                output / LOGS / f"game-{game.index + 1:04d}.log", "\n".join(done.logs) + "\n"
            )
        self.store.add(game)
        append_pgn(output / PGN, game.pgn)
        page = output / game_page_path(game.index)
        page.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(page, done.page)
        self.standings.add(game)
        self.history.note(game.players)
        self._refresh()

    def _refresh(self, *, force: bool = False) -> None:
        if self.board is not None:
            self.board(self)
        now = time.monotonic()
        if force or now - self._site_written >= SITE_TICK:
            self._site_written = now
            write_site(self)
