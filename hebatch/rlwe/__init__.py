"""What the RLWE schemes (hebatch.bfv, hebatch.bgv) share, as plain functions and base classes with
explicit arguments: the ring (negacyclic NTTs over RNS limbs, the backend's RNS engine), the batch
encoder's slot layout, key generation and key switching over the RNS gadget, automorphisms and the
rotation index math, noise budgets, the checks of objects on use, and the byte frames of objects.

Every scheme keeps its own parameters, objects and arithmetic; what it takes from here it calls with
its moduli, keys and arrays, so nothing here knows which scheme calls it. Modules: ring, encoder,
params, keys, switching, noise, checks, frame, objects (import the one you need; this face imports
none, so the modules' imports of each other form no cycle through it).
"""
