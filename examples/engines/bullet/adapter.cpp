// adapter.cpp — runs one Bullet scenario file and prints detgate's state stream on stdout (CSV or binary).
// Scenario format and flags: see README.md beside this file. Errors go to stderr; exit 2 = bad input.
#include <btBulletDynamicsCommon.h>
#include <BulletDynamics/Dynamics/btDiscreteDynamicsWorldMt.h>
#include <BulletDynamics/Dynamics/btSimulationIslandManagerMt.h>
#include <BulletDynamics/ConstraintSolver/btSequentialImpulseConstraintSolverMt.h>
#include <BulletCollision/CollisionDispatch/btCollisionDispatcherMt.h>
#include <LinearMath/btThreads.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <set>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

enum Shape { SHAPE_BOX = 0, SHAPE_SPHERE = 1, SHAPE_PLANE = 2 };

// The declared schema (docs/STATES-STREAM.md, "Declared fields"; the same as detgate.ini's [schema]):
// pos, vel, rot and Bullet's own angular velocity per axis, activation (isActive), body kind and
// whether continuous collision detection is on; 1/1024 m and m/s, 1/4096 rad/s (docs/ENGINES-examples.md)
const double POS_Q = 0.0009765625, VEL_Q = 0.0009765625, ANGVEL_Q = 0.000244140625;
// kind's values in the order of Bullet's collision flags: 0 neither, CF_STATIC_OBJECT 1, CF_KINEMATIC_OBJECT 2
const char *const KIND_NAME[] = {"dynamic", "static", "kinematic"};
const char CSV_SCHEMA[] =
    "#! schema standard=pos,vel,rot position_quantum=0.0009765625 velocity_quantum=0.0009765625\n"
    "#! field angvel.x type=float unit=rad/s quantum=0.000244140625\n"
    "#! field angvel.y type=float unit=rad/s quantum=0.000244140625\n"
    "#! field angvel.z type=float unit=rad/s quantum=0.000244140625\n"
    "#! field awake type=bool\n"
    "#! field kind type=enum values=dynamic,static,kinematic\n"
    "#! field ccd type=bool\n"
    "tick,id,px,py,pz,vx,vy,vz,qw,qx,qy,qz,angvel.x,angvel.y,angvel.z,awake,kind,ccd\n";

struct BodySpec {
    uint32_t id = 0;
    Shape shape = SHAPE_BOX;
    btVector3 pos{0, 0, 0};
    btVector3 half{0.5, 0.5, 0.5};  // box half extents; half.x() is a sphere's radius
    btVector3 vel{0, 0, 0};
    btScalar mass = 1;
    bool ccd = false;
};

enum JointKind { JOINT_P2P, JOINT_HINGE };

struct JointSpec {
    uint32_t a = 0, b = 0;  // b == 0: pinned to the world
    JointKind kind = JOINT_P2P;
    btVector3 pivot_a{0, 0, 0}, pivot_b{0, 0, 0};  // in each body's frame (pivot_b world when b == 0)
};

struct Event {
    long tick = 0;
    bool spawn = false;  // else remove
    BodySpec body;
    uint32_t remove_id = 0;
    int line = 0;
};

struct Scenario {
    long ticks = 600;
    int hz = 60;
    int iterations = 10;
    bool split_impulse = true;
    bool warm_starting = true;
    std::vector<BodySpec> bodies;
    std::vector<JointSpec> joints;
    std::vector<Event> events;
    uint32_t next_id = 1;
    std::set<uint32_t> removed;  // while reading: so a bad remove fails before anything is printed
};

struct Options {
    const char *scenario = nullptr;
    bool binary = false;
    int runs = 1;
    bool reuse_world = false;
    bool reset_pairs = false;
    bool reset_inertia = false;
    int mt_threads = 0;  // 0: btDiscreteDynamicsWorld
    int iterations = -1, warm = -1, split = -1;  // -1: the scenario's
};

[[noreturn]] void die(int code, const std::string &msg) {
    std::fprintf(stderr, "bullet_adapter: %s\n", msg.c_str());
    std::exit(code);
}

// ---- scenario parsing -------------------------------------------------------------------------

struct LineReader {
    std::string file;
    int line = 0;
    std::istringstream in;
    [[noreturn]] void fail(const std::string &what) const {
        die(2, file + ":" + std::to_string(line) + ": " + what);
    }
    double num(const char *what) {
        std::string tok;
        if (!(in >> tok)) fail(std::string("expected ") + what + ", found the end of the line");
        char *end = nullptr;
        errno = 0;
        double v = std::strtod(tok.c_str(), &end);
        if (end == tok.c_str() || *end != '\0' || errno == ERANGE)
            fail(std::string("expected ") + what + " (a number), found '" + tok + "'");
        return v;
    }
    long integer(const char *what, long lo, long hi) {
        double v = num(what);
        if (v != static_cast<double>(static_cast<long>(v)) || v < lo || v > hi)
            fail(std::string(what) + ": expected an integer in " + std::to_string(lo) + ".." +
                 std::to_string(hi));
        return static_cast<long>(v);
    }
    std::string word(const char *what) {
        std::string tok;
        if (!(in >> tok)) fail(std::string("expected ") + what + ", found the end of the line");
        return tok;
    }
    bool on_off(const char *what) {
        std::string w = word(what);
        if (w == "on") return true;
        if (w == "off") return false;
        fail(std::string(what) + ": expected on or off, found '" + w + "'");
    }
    void end() {
        std::string tok;
        if (in >> tok) fail("unexpected '" + tok + "' at the end of the line");
    }
    btVector3 vec(const char *what) {
        double x = num(what), y = num(what), z = num(what);
        return btVector3(btScalar(x), btScalar(y), btScalar(z));
    }
};

BodySpec parse_body(LineReader &r, const std::string &kind, Scenario &s) {
    BodySpec b;
    if (kind == "box") {
        b.shape = SHAPE_BOX;
        b.pos = r.vec("position x y z");
        b.half = r.vec("half extents x y z");
        b.mass = btScalar(r.num("mass"));
    } else if (kind == "sphere" || kind == "projectile") {
        b.shape = SHAPE_SPHERE;
        b.pos = r.vec("position x y z");
        if (kind == "projectile") b.vel = r.vec("velocity x y z");
        double rad = r.num("radius");
        b.half = btVector3(btScalar(rad), btScalar(rad), btScalar(rad));
        b.mass = btScalar(r.num("mass"));
        b.ccd = kind == "projectile";
    } else {
        r.fail("unknown body '" + kind + "': expected box, sphere or projectile");
    }
    if (b.mass < 0) r.fail("mass: expected >= 0 (0 is a static body)");
    if (b.half.x() <= 0 || b.half.y() <= 0 || b.half.z() <= 0) r.fail("size: expected > 0");
    b.id = s.next_id++;
    return b;
}

void add_stack(LineReader &r, Scenario &s, bool pyramid) {
    long n = r.integer("count", 1, 100);
    double x = r.num("x"), z = r.num("z"), h = r.num("half size");
    if (h <= 0) r.fail("half size: expected > 0");
    for (long row = 0; row < n; ++row) {
        long in_row = pyramid ? n - row : 1;
        for (long i = 0; i < in_row; ++i) {
            BodySpec b;
            b.shape = SHAPE_BOX;
            double off = pyramid ? (i - (in_row - 1) / 2.0) * 2.0 * h : 0.0;
            b.pos = btVector3(btScalar(x + off), btScalar(h + row * 2.0 * h), btScalar(z));
            b.half = btVector3(btScalar(h), btScalar(h), btScalar(h));
            b.id = s.next_id++;
            s.bodies.push_back(b);
        }
    }
}

void add_chain(LineReader &r, Scenario &s) {
    long n = r.integer("count", 1, 200);
    btVector3 top = r.vec("anchor x y z");
    double h = r.num("link half length");
    std::string kind = r.word("p2p or hinge");
    if (h <= 0) r.fail("link half length: expected > 0");
    if (kind != "p2p" && kind != "hinge") r.fail("joint: expected p2p or hinge, found '" + kind + "'");
    btScalar hs = btScalar(h);
    uint32_t prev = 0;
    for (long i = 0; i < n; ++i) {
        BodySpec b;
        b.shape = SHAPE_BOX;
        // links hang sideways along +x from the anchor, so the chain swings down when released
        b.pos = top + btVector3(hs + btScalar(i) * 2 * hs, 0, 0);
        b.half = btVector3(hs, hs * btScalar(0.25), hs * btScalar(0.25));
        b.id = s.next_id++;
        s.bodies.push_back(b);
        JointSpec j;
        j.kind = kind == "p2p" ? JOINT_P2P : JOINT_HINGE;
        j.a = b.id;
        j.b = prev;
        j.pivot_a = btVector3(-hs, 0, 0);
        j.pivot_b = prev ? btVector3(hs, 0, 0) : top;
        s.joints.push_back(j);
        prev = b.id;
    }
}

void parse_line(LineReader &r, Scenario &s) {
    std::string key;
    if (!(r.in >> key) || key[0] == '#') return;
    if (key == "ticks") s.ticks = r.integer("ticks", 1, 10000000);
    else if (key == "hz") s.hz = int(r.integer("hz", 1, 100000));
    else if (key == "iterations") s.iterations = int(r.integer("iterations", 1, 1000));
    else if (key == "split_impulse") s.split_impulse = r.on_off("split_impulse");
    else if (key == "warm_starting") s.warm_starting = r.on_off("warm_starting");
    else if (key == "ground") {
        BodySpec b;
        b.shape = SHAPE_PLANE;
        b.mass = 0;
        b.id = s.next_id++;
        s.bodies.push_back(b);
    } else if (key == "box" || key == "sphere" || key == "projectile") s.bodies.push_back(parse_body(r, key, s));
    else if (key == "stack" || key == "pyramid") add_stack(r, s, key == "pyramid");
    else if (key == "chain") add_chain(r, s);
    else if (key == "at") {
        Event e;
        e.line = r.line;
        e.tick = r.integer("tick", 0, 10000000);
        std::string what = r.word("spawn or remove");
        if (what == "spawn") {
            e.spawn = true;
            e.body = parse_body(r, r.word("a body"), s);
        } else if (what == "remove") {
            e.remove_id = uint32_t(r.integer("id", 1, 4294967295L));
            if (e.remove_id >= s.next_id) r.fail("remove: no body has id " + std::to_string(e.remove_id) + " yet");
            if (!s.removed.insert(e.remove_id).second)
                r.fail("remove: body " + std::to_string(e.remove_id) + " is already removed");
        } else {
            r.fail("at: expected spawn or remove, found '" + what + "'");
        }
        if (!s.events.empty() && s.events.back().tick > e.tick) r.fail("at: ticks must not decrease");
        s.events.push_back(e);
    } else {
        r.fail("unknown line '" + key +
               "': expected ticks, hz, iterations, split_impulse, warm_starting, ground, box, sphere, "
               "projectile, stack, pyramid, chain or at");
    }
    r.end();
}

Scenario load_scenario(const char *path) {
    FILE *f = std::fopen(path, "r");
    if (!f) die(2, std::string(path) + ": cannot open: " + std::strerror(errno));
    Scenario s;
    LineReader r;
    r.file = path;
    char buf[4096];
    while (std::fgets(buf, sizeof buf, f)) {
        ++r.line;
        r.in.clear();
        r.in.str(buf);
        parse_line(r, s);
    }
    std::fclose(f);
    return s;
}

// ---- the world --------------------------------------------------------------------------------

struct Body {
    BodySpec spec;
    std::unique_ptr<btCollisionShape> shape;
    std::unique_ptr<btDefaultMotionState> motion;
    std::unique_ptr<btRigidBody> rb;
    bool in_world = false;
};

class World {
  public:
    World(const Scenario &s, const Options &o) : sc_(s), opt_(o) { build(); }
    ~World() { teardown(); }
    World(const World &) = delete;
    World &operator=(const World &) = delete;

    // puts every initial body back where it started, in this same world (the --reuse-world pitfall)
    void reset_bodies() {
        for (auto &c : joints_) world_->removeConstraint(c.get());
        joints_.clear();
        joint_specs_.clear();
        std::vector<uint32_t> spawned;
        for (auto &kv : bodies_) {
            Body &b = kv.second;
            bool initial = is_initial(kv.first);
            if (!initial) {
                if (b.in_world) remove_body(kv.first);
                spawned.push_back(kv.first);
                continue;
            }
            if (!b.in_world) add_to_world(b);
            btTransform t;
            t.setIdentity();
            t.setOrigin(b.spec.pos);
            b.rb->setWorldTransform(t);
            b.rb->setInterpolationWorldTransform(t);
            b.motion->setWorldTransform(t);
            b.rb->setLinearVelocity(b.spec.vel);
            b.rb->setAngularVelocity(btVector3(0, 0, 0));
            b.rb->setInterpolationLinearVelocity(b.spec.vel);
            b.rb->setInterpolationAngularVelocity(btVector3(0, 0, 0));
            b.rb->clearForces();
            // setWorldTransform leaves the world-frame inverse inertia of the old orientation
            if (opt_.reset_inertia) b.rb->updateInertiaTensor();
            if (b.spec.mass > 0) b.rb->activate(true);
        }
        for (uint32_t id : spawned) bodies_.erase(id);  // spawned ones are made anew
        if (opt_.reset_pairs) reset_pairs();
        add_joints();
    }

    void run(long tick0, FILE *out, bool emit) {
        btScalar dt = btScalar(1.0) / btScalar(sc_.hz);
        size_t ev = 0;
        for (long t = 0; t < sc_.ticks; ++t) {
            for (; ev < sc_.events.size() && sc_.events[ev].tick <= t; ++ev) apply(sc_.events[ev]);
            // maxSubSteps = 0: one internal step of exactly dt per call, no accumulator, no interpolation
            world_->stepSimulation(dt, 0);
            if (emit) write_tick(out, tick0 + t);
        }
    }

  private:
    // --reset-pairs: what a team tries before re-creating the world: every body out and back in id
    // order (dropping its pairs and contact manifolds), the broadphase pool and the solver reset
    void reset_pairs() {
        for (auto &kv : bodies_)
            if (kv.second.in_world) world_->removeRigidBody(kv.second.rb.get());
        broadphase_->resetPool(dispatcher_.get());
        if (solver_) solver_->reset();
        for (auto &kv : bodies_)
            if (kv.second.in_world) world_->addRigidBody(kv.second.rb.get());
    }

    const Scenario &sc_;
    const Options &opt_;
    std::unique_ptr<btDefaultCollisionConfiguration> config_;
    std::unique_ptr<btCollisionDispatcher> dispatcher_;
    std::unique_ptr<btBroadphaseInterface> broadphase_;
    std::unique_ptr<btConstraintSolver> solver_;
    std::unique_ptr<btConstraintSolverPoolMt> pool_;
    std::unique_ptr<btDiscreteDynamicsWorld> world_;
    std::map<uint32_t, Body> bodies_;  // by id: the stream's order
    std::vector<std::unique_ptr<btTypedConstraint>> joints_;
    std::vector<JointSpec> joint_specs_;

    bool is_initial(uint32_t id) const {
        for (const BodySpec &b : sc_.bodies)
            if (b.id == id) return true;
        return false;
    }

    void build() {
        config_.reset(new btDefaultCollisionConfiguration());
        broadphase_.reset(new btDbvtBroadphase());
        if (opt_.mt_threads > 0) build_mt();
        else {
            dispatcher_.reset(new btCollisionDispatcher(config_.get()));
            solver_.reset(new btSequentialImpulseConstraintSolver());
            world_.reset(new btDiscreteDynamicsWorld(dispatcher_.get(), broadphase_.get(), solver_.get(), config_.get()));
        }
        world_->setGravity(btVector3(0, -10, 0));
        btContactSolverInfo &si = world_->getSolverInfo();
        si.m_numIterations = opt_.iterations > 0 ? opt_.iterations : sc_.iterations;
        si.m_splitImpulse = (opt_.split >= 0 ? opt_.split : sc_.split_impulse) ? 1 : 0;
        bool warm = opt_.warm >= 0 ? opt_.warm != 0 : sc_.warm_starting;
        if (warm) si.m_solverMode |= SOLVER_USE_WARMSTARTING;
        else si.m_solverMode &= ~SOLVER_USE_WARMSTARTING;
        for (const BodySpec &b : sc_.bodies) add_to_world(make_body(b));
        add_joints();
    }

    void build_mt() {
        btITaskScheduler *ts = btCreateDefaultTaskScheduler();
        if (!ts) die(3, "--mt: this Bullet build has no task scheduler (built without BT_THREADSAFE)");
        btSetTaskScheduler(ts);
        ts->setNumThreads(opt_.mt_threads);
        dispatcher_.reset(new btCollisionDispatcherMt(config_.get(), 40));
        pool_.reset(new btConstraintSolverPoolMt(opt_.mt_threads));
        world_.reset(new btDiscreteDynamicsWorldMt(dispatcher_.get(), broadphase_.get(), pool_.get(), nullptr,
                                                   config_.get()));
    }

    Body &make_body(const BodySpec &spec) {
        Body &b = bodies_[spec.id];
        b.spec = spec;
        if (spec.shape == SHAPE_PLANE) b.shape.reset(new btStaticPlaneShape(btVector3(0, 1, 0), 0));
        else if (spec.shape == SHAPE_SPHERE) b.shape.reset(new btSphereShape(spec.half.x()));
        else b.shape.reset(new btBoxShape(spec.half));
        btTransform t;
        t.setIdentity();
        t.setOrigin(spec.pos);
        b.motion.reset(new btDefaultMotionState(t));
        btVector3 inertia(0, 0, 0);
        if (spec.mass > 0) b.shape->calculateLocalInertia(spec.mass, inertia);
        btRigidBody::btRigidBodyConstructionInfo ci(spec.mass, b.motion.get(), b.shape.get(), inertia);
        b.rb.reset(new btRigidBody(ci));
        b.rb->setLinearVelocity(spec.vel);
        if (spec.ccd) {
            b.rb->setCcdMotionThreshold(spec.half.x() * btScalar(0.5));
            b.rb->setCcdSweptSphereRadius(spec.half.x() * btScalar(0.8));
        }
        return b;
    }

    void add_to_world(Body &b) {
        world_->addRigidBody(b.rb.get());
        b.in_world = true;
    }

    void add_joints() {
        for (const JointSpec &j : sc_.joints) {
            btRigidBody *a = bodies_.at(j.a).rb.get();
            btTypedConstraint *c;
            if (j.kind == JOINT_P2P) {
                c = j.b ? new btPoint2PointConstraint(*a, *bodies_.at(j.b).rb, j.pivot_a, j.pivot_b)
                        : new btPoint2PointConstraint(*a, j.pivot_a);
            } else {
                btVector3 axis(0, 0, 1);
                c = j.b ? new btHingeConstraint(*a, *bodies_.at(j.b).rb, j.pivot_a, j.pivot_b, axis, axis)
                        : new btHingeConstraint(*a, j.pivot_a, axis);
            }
            joints_.emplace_back(c);
            joint_specs_.push_back(j);
            world_->addConstraint(c, true);
        }
    }

    void remove_body(uint32_t id) {
        Body &b = bodies_.at(id);
        for (size_t i = 0; i < joints_.size();) {  // a removed body's joints go with it
            if (joint_specs_[i].a == id || joint_specs_[i].b == id) {
                world_->removeConstraint(joints_[i].get());
                joints_.erase(joints_.begin() + long(i));
                joint_specs_.erase(joint_specs_.begin() + long(i));
            } else {
                ++i;
            }
        }
        world_->removeRigidBody(b.rb.get());
        b.in_world = false;
    }

    void apply(const Event &e) {
        if (e.spawn) {
            add_to_world(make_body(e.body));
            return;
        }
        auto it = bodies_.find(e.remove_id);
        if (it == bodies_.end() || !it->second.in_world)
            die(2, std::string(opt_.scenario) + ":" + std::to_string(e.line) + ": remove: body " +
                       std::to_string(e.remove_id) + " is not in the world at tick " + std::to_string(e.tick));
        remove_body(e.remove_id);
    }

    static unsigned kind_of(const btRigidBody &rb) {
        return rb.isStaticObject() ? 1u : rb.isKinematicObject() ? 2u : 0u;
    }

    void write_tick(FILE *out, long tick) {
        if (opt_.binary) {
            write_tick_binary(out, tick);
            return;
        }
        for (auto &kv : bodies_) {
            if (!kv.second.in_world) continue;
            const btRigidBody &rb = *kv.second.rb;
            // the body's own transform, not the motion state's (which may be interpolated)
            const btTransform &t = rb.getWorldTransform();
            btQuaternion q = t.getRotation();
            const btVector3 &p = t.getOrigin(), &v = rb.getLinearVelocity(), &w = rb.getAngularVelocity();
            std::fprintf(out, "%ld,%u,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%s,%s,%s\n", tick,
                         kv.first, double(p.x()), double(p.y()), double(p.z()), double(v.x()), double(v.y()),
                         double(v.z()), double(q.w()), double(q.x()), double(q.y()), double(q.z()), double(w.x()),
                         double(w.y()), double(w.z()), rb.isActive() ? "true" : "false", KIND_NAME[kind_of(rb)],
                         rb.getCcdMotionThreshold() > 0 ? "true" : "false");
        }
    }

    void write_tick_binary(FILE *out, long tick) {
        uint32_t count = 0;
        for (auto &kv : bodies_) count += kv.second.in_world ? 1 : 0;
        std::vector<unsigned char> rec;
        rec.reserve(17 + size_t(count) * (98 + 6 * 8));
        put_le(rec, 1, 1);
        put_le(rec, uint64_t(tick), 8);
        put_le(rec, count, 4);
        put_le(rec, 0, 4); // events
        for (auto &kv : bodies_) {
            if (!kv.second.in_world) continue;
            const btRigidBody &rb = *kv.second.rb;
            const btTransform &t = rb.getWorldTransform();
            btQuaternion q = t.getRotation();
            const btVector3 &p = t.getOrigin(), &v = rb.getLinearVelocity(), &w = rb.getAngularVelocity();
            put_le(rec, kv.first, 4);
            put_le(rec, 0, 6); // type, faction, flags: absent from the schema
            const double vals[11] = {double(p.x()), double(p.y()), double(p.z()), double(v.x()), double(v.y()),
                                     double(v.z()), double(q.w()), double(q.x()), double(q.y()), double(q.z()), 0.0};
            for (double d : vals) put_double(rec, d);
            put_double(rec, double(w.x()));
            put_double(rec, double(w.y()));
            put_double(rec, double(w.z()));
            put_le(rec, rb.isActive() ? 1 : 0, 8);
            put_le(rec, kind_of(rb), 8);
            put_le(rec, rb.getCcdMotionThreshold() > 0 ? 1 : 0, 8);
        }
        std::fwrite(rec.data(), 1, rec.size(), out);
    }

    static void put_le(std::vector<unsigned char> &v, uint64_t x, int n) {
        for (int i = 0; i < n; ++i) v.push_back(static_cast<unsigned char>(x >> (8 * i)));
    }
    static void put_double(std::vector<unsigned char> &v, double d) {
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        put_le(v, bits, 8);
    }

    void teardown() {
        if (!world_) return;
        for (auto &c : joints_) world_->removeConstraint(c.get());
        joints_.clear();
        for (auto &kv : bodies_)
            if (kv.second.in_world) world_->removeRigidBody(kv.second.rb.get());
        bodies_.clear();
        world_.reset();
    }
};

// ---- command line -----------------------------------------------------------------------------

[[noreturn]] void usage(const std::string &why) {
    die(2, why +
               "\nusage: bullet_adapter SCENARIO [--format csv|bin] [--runs N [--reuse-world [--reset-pairs] [--reset-inertia]]] [--mt THREADS]\n"
               "       [--iterations N] [--warm-starting on|off] [--split-impulse on|off]");
}

int int_arg(int argc, char **argv, int &i, int lo, int hi) {
    if (i + 1 >= argc) usage(std::string(argv[i]) + ": expected a value");
    char *end = nullptr;
    long v = std::strtol(argv[++i], &end, 10);
    if (*end || end == argv[i] || v < lo || v > hi)
        usage(std::string(argv[i - 1]) + ": expected an integer in " + std::to_string(lo) + ".." +
              std::to_string(hi) + ", found '" + argv[i] + "'");
    return int(v);
}

int on_off_arg(int argc, char **argv, int &i) {
    if (i + 1 >= argc) usage(std::string(argv[i]) + ": expected on or off");
    std::string v = argv[++i];
    if (v == "on") return 1;
    if (v == "off") return 0;
    usage(std::string(argv[i - 1]) + ": expected on or off, found '" + v + "'");
}

Options parse_args(int argc, char **argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--format") {
            std::string f = i + 1 < argc ? argv[++i] : "";
            if (f != "csv" && f != "bin") usage("--format: expected csv or bin, found '" + f + "'");
            o.binary = f == "bin";
        } else if (a == "--runs") o.runs = int_arg(argc, argv, i, 1, 100);
        else if (a == "--reuse-world") o.reuse_world = true;
        else if (a == "--reset-pairs") o.reset_pairs = true;
        else if (a == "--reset-inertia") o.reset_inertia = true;
        else if (a == "--mt") o.mt_threads = int_arg(argc, argv, i, 1, 64);
        else if (a == "--iterations") o.iterations = int_arg(argc, argv, i, 1, 1000);
        else if (a == "--warm-starting") o.warm = on_off_arg(argc, argv, i);
        else if (a == "--split-impulse") o.split = on_off_arg(argc, argv, i);
        else if (a.size() > 1 && a[0] == '-') usage("unknown option '" + a + "'");
        else if (o.scenario) usage("one scenario only, found '" + a + "' too");
        else o.scenario = argv[i];
    }
    if (!o.scenario) usage("expected a scenario file");
    if (o.reuse_world && o.runs < 2) usage("--reuse-world: needs --runs 2 or more");
    if ((o.reset_pairs || o.reset_inertia) && !o.reuse_world) usage("--reset-pairs, --reset-inertia: need --reuse-world");
    return o;
}

void put_u(std::vector<unsigned char> &v, uint64_t x, int n) {
    for (int i = 0; i < n; ++i) v.push_back(static_cast<unsigned char>(x >> (8 * i)));
}
void put_f64(std::vector<unsigned char> &v, double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    put_u(v, bits, 8);
}
void put_str8(std::vector<unsigned char> &v, const char *s) {
    size_t n = std::strlen(s);
    v.push_back(static_cast<unsigned char>(n));
    v.insert(v.end(), s, s + n);
}
// one declared field of the binary v2 header block: type, bits (0: not an int/bytes), quantum, name,
// unit, enum value names (docs/STATES-STREAM.md, "Binary (version 2)")
void put_field(std::vector<unsigned char> &v, int type, double quantum, const char *name, const char *unit,
               std::initializer_list<const char *> values) {
    put_u(v, uint64_t(type), 1);
    put_u(v, 0, 1);
    put_f64(v, quantum);
    put_str8(v, name);
    put_str8(v, unit);
    put_u(v, values.size(), 2);
    for (const char *n : values) put_str8(v, n);
}

void write_header(FILE *out, const Options &o, const Scenario &s) {
    if (!o.binary) {
        std::fputs(CSV_SCHEMA, out);
        return;
    }
    std::vector<unsigned char> h = {0x89, 'D', 'G', 'S', 2, 0, 0, 0};
    put_u(h, uint64_t(s.hz), 4);
    std::vector<unsigned char> blk;
    put_u(blk, 0, 8);    // planetRadiusM: none
    put_u(blk, 0x1c, 1); // stdMask: pos, vel, rot
    put_f64(blk, POS_Q);
    put_f64(blk, VEL_Q);
    put_u(blk, 6, 1); // fieldCount
    for (const char *axis : {"angvel.x", "angvel.y", "angvel.z"}) put_field(blk, 3, ANGVEL_Q, axis, "rad/s", {});
    put_field(blk, 4, 0, "awake", "", {});
    put_field(blk, 5, 0, "kind", "", {KIND_NAME[0], KIND_NAME[1], KIND_NAME[2]});
    put_field(blk, 4, 0, "ccd", "", {});
    put_u(blk, 0, 2 + 2 + 2); // no type, faction or participant table
    put_u(h, blk.size(), 4);
    h.insert(h.end(), blk.begin(), blk.end());
    std::fwrite(h.data(), 1, h.size(), out);
}

}  // namespace

int main(int argc, char **argv) {
    Options o = parse_args(argc, argv);
    Scenario s = load_scenario(o.scenario);
    // The stream's buffer: stdio's default for a pipe is 4 KiB, one write(2) per 4 KiB, each waking the
    // reader (detgate) and taking the pipe's lock against it; 256 KiB is a quarter of the 1 MiB pipe
    // detgate asks for (docs/ENGINES-examples.md "Figures").
    static char buf[1 << 18];
    std::setvbuf(stdout, buf, _IOFBF, sizeof buf);
    write_header(stdout, o, s);
    // --runs N: only the last run is printed, so it can be compared with a single run's recording
    std::unique_ptr<World> w;
    for (int r = 0; r < o.runs; ++r) {
        if (!w || !o.reuse_world) {
            w.reset();
            w.reset(new World(s, o));
        } else {
            w->reset_bodies();
        }
        w->run(0, stdout, r == o.runs - 1);
    }
    if (o.binary) std::fputc(0, stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) die(1, "writing the state stream failed");
    return 0;
}
