-- SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
--[[
longhaul's gateway-to-gateway messages in Wireshark and tshark (docs/protocol.md).

  longhaul        Depot reports, UDP port 4792 (include/lh_proto.h): every field,
                  the PSNs the Depot holds and the ones missing between ePSN and
                  ePSN_D, and the checks the Sentry makes (bad magic, version,
                  type, length or nbits: "malformed", as the Sentry rejects it).
  longhaul_mark   RoCEv2 packets with the Depot mark (0x20) in BTH byte 4: a
                  NAK (RC ACKNOWLEDGE, AETH 0x60) so marked is a Depot-NACK, with
                  its range of missing PSNs and an ICRC check (Wireshark 4.0 has
                  none) that leaves byte 4 out, as RoCEv2 does.

  tshark -X lua_script:user/wireshark/longhaul.lua -r capture.pcap -Y longhaul.dnack
  or copy the file into ~/.local/lib/wireshark/plugins/ (Wireshark >= 4.0, Lua 5.2).

Filter fields: longhaul.report.* (magic version type dqpn peer_qpn epsn epsn_d
nbits flags sack seq held span held_count missing_count held_psn missing_psn
held_psns missing_psns), longhaul.dnack (present on Depot-NACKs only),
longhaul.dnack.len, .first, .last, .byte4, .fecn, .becn, .mark, .len_minus1,
longhaul.icrc.computed, longhaul.icrc.good; expert: longhaul.malformed and
the others in the experts table below.
]]

local REPORT_PORT = 4792
local REPORT_LEN = 60
local REPORT_MAGIC = 0x4c48 -- "LH"
local REPORT_VERSION = 1
local REPORT_BITS = 256
local DNACK_MARK = 0x20
local DNACK_LEN_MASK = 0x1f
local OP_RC_ACK = 0x11
local NAK_PSN_SEQ_ERROR = 0x60
local PSN_MASK = 0xffffff

local band, bor, bxor, lshift, rshift = bit32.band, bit32.bor, bit32.bxor, bit32.lshift, bit32.rshift

local function psn_add(a, n)
	return band(a + n, PSN_MASK)
end

-- PSNs as "a, b-c, d": consecutive runs (modulo 2^24) folded into ranges
local function psn_ranges(list)
	local out, i = {}, 1
	while i <= #list do
		local j = i
		while j < #list and list[j + 1] == psn_add(list[j], 1) do
			j = j + 1
		end
		if j == i then
			out[#out + 1] = tostring(list[i])
		else
			out[#out + 1] = list[i] .. "-" .. list[j]
		end
		i = j + 1
	end
	return table.concat(out, ", ")
end

-- ---------------------------------------------------------------- ICRC
-- CRC-32 (IEEE, reflected), as RoCEv2's ICRC (IBTA annex A17.8)
local crc_tab = {}
for i = 0, 255 do
	local c = i
	for _ = 1, 8 do
		if band(c, 1) ~= 0 then
			c = bxor(0xedb88320, rshift(c, 1))
		else
			c = rshift(c, 1)
		end
	end
	crc_tab[i] = c
end

-- ICRC of the RoCEv2 packet whose IP header starts at l3 in tvb, UDP at udp,
-- ICRC at icrc: a pseudo LRH of ones, then IP, UDP and transport headers and
-- payload with the variant fields as ones (IPv4 TOS, TTL, header checksum;
-- IPv6 traffic class, flow label, hop limit; UDP checksum; BTH byte 4).
local function icrc_compute(tvb, l3, udp, icrc)
	local ba = tvb:range(l3, icrc - l3):bytes()
	local v = rshift(ba:get_index(0), 4)
	local masked = {}
	if v == 4 then
		masked = { [1] = true, [8] = true, [10] = true, [11] = true }
	elseif v == 6 then
		masked = { [1] = true, [2] = true, [3] = true, [7] = true }
	else
		return nil
	end
	local u = udp - l3
	masked[u + 6], masked[u + 7], masked[u + 8 + 4] = true, true, true
	local crc = 0xffffffff
	for _ = 1, 8 do
		crc = bxor(crc_tab[band(bxor(crc, 0xff), 0xff)], rshift(crc, 8))
	end
	for i = 0, ba:len() - 1 do
		local b = ba:get_index(i)
		if i == 0 and v == 6 then
			b = bor(b, 0x0f)
		elseif masked[i] then
			b = 0xff
		end
		crc = bxor(crc_tab[band(bxor(crc, b), 0xff)], rshift(crc, 8))
	end
	return bxor(crc, 0xffffffff)
end

-- ---------------------------------------------------------------- reports
local p_report = Proto("longhaul", "longhaul Depot report")

local msg_types = { [1] = "Depot report" }

local rf = {
	magic = ProtoField.uint16("longhaul.report.magic", "Magic", base.HEX),
	version = ProtoField.uint8("longhaul.report.version", "Version", base.DEC),
	type = ProtoField.uint8("longhaul.report.type", "Type", base.DEC, msg_types),
	-- four-byte fields whose high byte is reserved: the 24 bits that count
	dqpn = ProtoField.uint24("longhaul.report.dqpn", "Data QPN (responder's)", base.HEX),
	peer_qpn = ProtoField.uint24("longhaul.report.peer_qpn", "Peer QPN (requester's)", base.HEX),
	epsn = ProtoField.uint24("longhaul.report.epsn", "ePSN (first PSN not delivered)", base.DEC),
	epsn_d = ProtoField.uint24("longhaul.report.epsn_d",
		"ePSN_D (one past the highest PSN received)", base.DEC),
	nbits = ProtoField.uint16("longhaul.report.nbits", "PSNs described (nbits)", base.DEC),
	flags = ProtoField.uint16("longhaul.report.flags", "Flags", base.HEX),
	sack = ProtoField.bool("longhaul.report.sack", "T/C-SACK (periodic report)", 16, nil, 0x0001),
	seq = ProtoField.uint32("longhaul.report.seq", "Sequence number", base.DEC),
	held = ProtoField.bytes("longhaul.report.held", "Held bitmap (bit i: ePSN + i held, LSB first)"),
	span = ProtoField.uint32("longhaul.report.span", "ePSN_D - ePSN (mod 2^24)", base.DEC),
	held_count = ProtoField.uint16("longhaul.report.held_count", "PSNs held", base.DEC),
	missing_count = ProtoField.uint16("longhaul.report.missing_count", "PSNs missing", base.DEC),
	held_psns = ProtoField.string("longhaul.report.held_psns", "Held PSNs"),
	missing_psns = ProtoField.string("longhaul.report.missing_psns", "Missing PSNs"),
	held_psn = ProtoField.uint32("longhaul.report.held_psn", "Held PSN", base.DEC),
	missing_psn = ProtoField.uint32("longhaul.report.missing_psn", "Missing PSN", base.DEC),
}
p_report.fields = {
	rf.magic, rf.version, rf.type, rf.dqpn, rf.peer_qpn, rf.epsn, rf.epsn_d, rf.nbits, rf.flags, rf.sack,
	rf.seq, rf.held, rf.span, rf.held_count, rf.missing_count, rf.held_psns, rf.missing_psns,
	rf.held_psn, rf.missing_psn,
}

local ex = {
	-- what the Sentry rejects (sentry_report_bad): the reason is in the text
	malformed = ProtoExpert.new("longhaul.malformed", "Malformed longhaul report",
		expert.group.MALFORMED, expert.severity.ERROR),
	inconsistent = ProtoExpert.new("longhaul.report.inconsistent",
		"ePSN_D - ePSN differs from nbits (the Sentry goes by ePSN and nbits)",
		expert.group.PROTOCOL, expert.severity.WARN),
	bits_beyond = ProtoExpert.new("longhaul.report.bits_beyond",
		"Held bits set at or beyond nbits (ignored)", expert.group.PROTOCOL, expert.severity.WARN),
	flags = ProtoExpert.new("longhaul.report.flags_unknown", "Unknown flags (version 1 defines 0x0001, T/C-SACK)",
		expert.group.PROTOCOL, expert.severity.NOTE),
	trailing = ProtoExpert.new("longhaul.report.trailing",
		"Bytes after the 60-byte report (ignored)", expert.group.PROTOCOL, expert.severity.NOTE),
	truncated = ProtoExpert.new("longhaul.report.truncated",
		"Capture truncated: report not decoded", expert.group.UNDECODED, expert.severity.NOTE),
	icrc_bad = ProtoExpert.new("longhaul.icrc.bad", "Wrong ICRC: a NIC drops this packet",
		expert.group.CHECKSUM, expert.severity.ERROR),
	icrc_unchecked = ProtoExpert.new("longhaul.icrc.unchecked",
		"ICRC not checked (packet truncated or inside an ICMP error)", expert.group.CHECKSUM,
		expert.severity.NOTE),
	stray = ProtoExpert.new("longhaul.mark.stray",
		"Depot mark on a packet that is not a PSN sequence error NAK (not a Depot-NACK)",
		expert.group.PROTOCOL, expert.severity.WARN),
}
p_report.experts = {
	ex.malformed, ex.inconsistent, ex.bits_beyond, ex.flags, ex.trailing, ex.truncated,
	ex.icrc_bad, ex.icrc_unchecked, ex.stray,
}

local function malformed(tree, pinfo, why)
	tree:add_proto_expert_info(ex.malformed, "Malformed longhaul report: " .. why)
	pinfo.cols.info:set("longhaul report [Malformed: " .. why .. "]")
end

function p_report.dissector(tvb, pinfo, root)
	local len, rlen = tvb:len(), tvb:reported_len()
	pinfo.cols.protocol:set("longhaul")
	local tree = root:add(p_report, tvb())

	-- the Sentry's checks (bpf/lib/sentry.h sentry_xdp_report_do), in its order
	if rlen < REPORT_LEN then
		malformed(tree, pinfo, string.format("%d bytes, a report has %d", rlen, REPORT_LEN))
		if len >= 2 then
			tree:add(rf.magic, tvb(0, 2))
		end
		return len
	end
	if len < REPORT_LEN then
		tree:add_proto_expert_info(ex.truncated)
		return len
	end
	local magic, version, mtype = tvb(0, 2):uint(), tvb(2, 1):uint(), tvb(3, 1):uint()
	tree:add(rf.magic, tvb(0, 2))
	tree:add(rf.version, tvb(2, 1))
	tree:add(rf.type, tvb(3, 1))
	if magic ~= REPORT_MAGIC then
		malformed(tree, pinfo, string.format("magic 0x%04x, not 0x%04x", magic, REPORT_MAGIC))
		return len
	end
	if version ~= REPORT_VERSION then
		malformed(tree, pinfo, string.format("version %d, this dissector knows %d", version,
			REPORT_VERSION))
		return len
	end
	if mtype ~= 1 then
		malformed(tree, pinfo, string.format("type %d unknown", mtype))
		return len
	end

	local dqpn, peer = band(tvb(4, 4):uint(), PSN_MASK), band(tvb(8, 4):uint(), PSN_MASK)
	local epsn, epsn_d = band(tvb(12, 4):uint(), PSN_MASK), band(tvb(16, 4):uint(), PSN_MASK)
	local nbits, flags, seq = tvb(20, 2):uint(), tvb(22, 2):uint(), tvb(24, 4):uint()
	tree:add(rf.dqpn, tvb(5, 3))
	tree:add(rf.peer_qpn, tvb(9, 3))
	tree:add(rf.epsn, tvb(13, 3))
	tree:add(rf.epsn_d, tvb(17, 3))
	local nb_item = tree:add(rf.nbits, tvb(20, 2))
	local fl_item = tree:add(rf.flags, tvb(22, 2))
	fl_item:add(rf.sack, tvb(22, 2))
	tree:add(rf.seq, tvb(24, 4))
	local held_item = tree:add(rf.held, tvb(28, 32))
	local span = band(epsn_d - epsn, PSN_MASK)
	tree:add(rf.span, span):set_generated()
	if band(flags, 0xfffe) ~= 0 then
		fl_item:add_proto_expert_info(ex.flags)
	end
	if len > REPORT_LEN then
		tree:add_proto_expert_info(ex.trailing)
	end
	if nbits > REPORT_BITS then
		malformed(nb_item, pinfo, string.format("nbits %d > %d", nbits, REPORT_BITS))
		return len
	end
	if span ~= nbits then
		nb_item:add_proto_expert_info(ex.inconsistent)
	end

	local held, missing, beyond = {}, {}, false
	for i = 0, REPORT_BITS - 1 do
		local bit = band(rshift(tvb(28 + math.floor(i / 8), 1):uint(), i % 8), 1)
		if i >= nbits then
			beyond = beyond or bit ~= 0
		elseif bit ~= 0 then
			held[#held + 1] = psn_add(epsn, i)
		else
			missing[#missing + 1] = psn_add(epsn, i)
		end
	end
	if beyond then
		held_item:add_proto_expert_info(ex.bits_beyond)
	end
	tree:add(rf.held_count, #held):set_generated()
	tree:add(rf.missing_count, #missing):set_generated()
	-- one item per PSN, on the bitmap byte that holds its bit
	local function psn_list(field, one, list)
		local sub = tree:add(field, psn_ranges(list))
		sub:set_generated()
		for _, x in ipairs(list) do
			sub:add(one, tvb(28 + math.floor(psn_add(x, -epsn) / 8), 1), x):set_generated()
		end
	end
	psn_list(rf.missing_psns, rf.missing_psn, missing)
	psn_list(rf.held_psns, rf.held_psn, held)
	local summary = string.format("seq %d, QP 0x%06x (peer 0x%06x), ePSN %d, ePSN_D %d: %d missing",
		seq, dqpn, peer, epsn, epsn_d, #missing)
	if #missing > 0 then
		local m = psn_ranges(missing)
		if #m > 60 then
			m = m:sub(1, 57) .. "..."
		end
		summary = summary .. " (" .. m .. ")"
	end
	tree:append_text(", " .. summary)
	pinfo.cols.info:set("Depot report " .. summary)
	return len
end

DissectorTable.get("udp.port"):add(REPORT_PORT, p_report)

-- ---------------------------------------------------------------- Depot-NACKs
local p_mark = Proto("longhaul_mark", "longhaul Depot-NACK")

local mf = {
	dnack = ProtoField.bool("longhaul.dnack", "Depot-NACK"),
	byte4 = ProtoField.uint8("longhaul.dnack.byte4", "BTH byte 4", base.HEX),
	fecn = ProtoField.bool("longhaul.dnack.fecn", "FECN", 8, nil, 0x80),
	becn = ProtoField.bool("longhaul.dnack.becn", "BECN", 8, nil, 0x40),
	mark = ProtoField.bool("longhaul.dnack.mark", "Depot mark", 8, nil, DNACK_MARK),
	len_minus1 = ProtoField.uint8("longhaul.dnack.len_minus1", "Missing PSNs - 1", base.DEC, nil,
		DNACK_LEN_MASK),
	len = ProtoField.uint8("longhaul.dnack.len", "Missing PSNs from the BTH PSN", base.DEC),
	first = ProtoField.uint32("longhaul.dnack.first", "First missing PSN (the Depot's ePSN)", base.DEC),
	last = ProtoField.uint32("longhaul.dnack.last", "Last missing PSN", base.DEC),
	icrc = ProtoField.uint32("longhaul.icrc.computed", "ICRC computed", base.HEX),
	icrc_good = ProtoField.bool("longhaul.icrc.good", "ICRC good"),
}
p_mark.fields = {
	mf.dnack, mf.byte4, mf.fecn, mf.becn, mf.mark, mf.len_minus1, mf.len, mf.first, mf.last, mf.icrc,
	mf.icrc_good,
}

local f_bth = Field.new("infiniband.bth")
local f_ip = Field.new("ip")
local f_ipv6 = Field.new("ipv6")
local f_icmp = Field.new("icmp")
local f_icmpv6 = Field.new("icmpv6")

-- offset of the last instance of protocol field f that starts before off, or nil
local function last_before(f, off)
	local best
	for _, fi in ipairs({ f() }) do
		if fi.offset < off and (not best or fi.offset > best) then
			best = fi.offset
		end
	end
	return best
end

-- The ICRC check of the RoCEv2 packet whose BTH is at bth in tvb
local function check_icrc(tvb, tree, bth)
	local udp = bth - 8
	local l3 = last_before(f_ip, udp)
	local l3v6 = last_before(f_ipv6, udp)
	if l3v6 and (not l3 or l3v6 > l3) then
		l3 = l3v6
	end
	local in_icmp = last_before(f_icmp, bth) or last_before(f_icmpv6, bth)
	if not l3 or udp < 0 or in_icmp then
		tree:add_proto_expert_info(ex.icrc_unchecked)
		return
	end
	local udp_len = tvb(udp + 4, 2):uint()
	local icrc_off = udp + udp_len - 4
	if udp_len < 8 + 12 + 4 or icrc_off + 4 > tvb:len() then
		tree:add_proto_expert_info(ex.icrc_unchecked)
		return
	end
	local want = icrc_compute(tvb, l3, udp, icrc_off)
	if not want then
		tree:add_proto_expert_info(ex.icrc_unchecked)
		return
	end
	-- compared and shown as the wire bytes read big-endian, as Wireshark shows
	-- infiniband.invariant.crc (the ICRC goes on the wire least significant byte first)
	local have = tvb(icrc_off, 4):uint()
	want = bor(rshift(want, 24), band(rshift(want, 8), 0xff00), band(lshift(want, 8), 0xff0000),
		lshift(want, 24))
	tree:add(mf.icrc, tvb(icrc_off, 4), want):set_generated()
	local good = tree:add(mf.icrc_good, tvb(icrc_off, 4), want == have)
	good:set_generated()
	if want ~= have then
		good:add_proto_expert_info(ex.icrc_bad,
			string.format("Wrong ICRC 0x%08x, should be 0x%08x: a NIC drops this packet", have, want))
	end
end

function p_mark.dissector(tvb, pinfo, root)
	for _, fi in ipairs({ f_bth() }) do
		-- offsets count in the frame's bytes; a BTH in another data source
		-- (reassembled, decompressed) is not one of ours and is left alone
		local bth = fi.offset
		if fi.len >= 12 and bth + 12 <= tvb:len() and
			tostring(tvb(bth, 12):bytes()) == tostring(fi.range:bytes()) then
			local b4 = tvb(bth + 4, 1):uint()
			if band(b4, DNACK_MARK) ~= 0 then
				local opcode = tvb(bth, 1):uint()
				local syn = bth + 13 <= tvb:len() and tvb(bth + 12, 1):uint() or -1
				local tree = root:add(p_mark, tvb(bth, 12))
				local b4_item = tree:add(mf.byte4, tvb(bth + 4, 1))
				b4_item:add(mf.fecn, tvb(bth + 4, 1))
				b4_item:add(mf.becn, tvb(bth + 4, 1))
				b4_item:add(mf.mark, tvb(bth + 4, 1))
				b4_item:add(mf.len_minus1, tvb(bth + 4, 1))
				if opcode == OP_RC_ACK and syn == NAK_PSN_SEQ_ERROR then
					local n = band(b4, DNACK_LEN_MASK) + 1
					local psn = band(tvb(bth + 8, 4):uint(), PSN_MASK)
					local last = psn_add(psn, n - 1)
					tree:add(mf.dnack, tvb(bth + 4, 1), true):set_generated()
					tree:add(mf.len, tvb(bth + 4, 1), n):set_generated()
					tree:add(mf.first, tvb(bth + 9, 3), psn):set_generated()
					tree:add(mf.last, last):set_generated()
					local what = n == 1 and tostring(psn) or (psn .. "-" .. last)
					tree:append_text(string.format(", %d missing: %s", n, what))
					check_icrc(tvb, tree, bth)
					pinfo.cols.info:append(string.format(" [longhaul Depot-NACK %s]", what))
				else
					tree:set_text("longhaul mark on a packet that is not a NAK")
					tree:add_proto_expert_info(ex.stray)
				end
			end
		end
	end
end

register_postdissector(p_mark)
